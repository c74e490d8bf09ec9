package deployment

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/droverhq/drover/structs"
)

// t0 is the origin of every time in the scenario files: "at=5m" means
// t0 + 5m.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// scenario is the observation a datadriven file builds up step by step.
type scenario struct {
	obs Observation
	// last is the latest decision, which apply writes.
	last Decision
	// waitReasons, set by the command wait-reasons, keeps every wait
	// reason of the decisions (wait_reason.go); the files written before
	// them keep only those of analysis runs (analysisReasonsOnly).
	waitReasons bool
}

// TestDecide runs the scenario files under testdata/decide. Each file
// builds a deployment with explicit times and prints the decisions;
// run with -rewrite to regenerate the expected output.
func TestDecide(t *testing.T) {
	datadriven.Walk(t, "testdata/decide", func(t *testing.T, path string) {
		var sc scenario
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := sc.run(t, td)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

func (sc *scenario) run(t *testing.T, td *datadriven.TestData) (string, error) {
	if out, ok, err := sc.runAnalysis(t, td); ok {
		return out, err
	}
	switch td.Cmd {
	case "deployment":
		sc.newDeployment(t, td)
		return "", nil
	case "group":
		return "", sc.addGroup(t, td)
	case "alloc":
		return "", sc.addAlloc(t, td)
	case "allocs":
		return "", sc.addAllocs(t, td)
	case "zone":
		return "", sc.addZone(t, td)
	case "latest":
		return "", sc.setLatest(t, td)
	case "stable":
		sc.setStable(t, td)
		return "", nil
	case "evals":
		var idx uint64
		td.ScanArgs(t, "index", &idx)
		sc.obs.LatestEvalIndex = idx
		return "", nil
	case "restart":
		// restart groups=web[,api] [reschedule] [batch-size=N] [wait-ask]
		// [on-error=fail|ask]: the deployment is a job restart.
		spec := &structs.RestartSpec{Reschedule: td.HasArg("reschedule"), BatchWaitAsk: td.HasArg("wait-ask")}
		var groups string
		td.ScanArgs(t, "groups", &groups)
		spec.Groups = strings.Split(groups, ",")
		if td.HasArg("batch-size") {
			var n int
			td.ScanArgs(t, "batch-size", &n)
			spec.BatchSize = structs.Count(n)
		}
		td.MaybeScanArgs(t, "on-error", &spec.OnError)
		sc.obs.Deployment.Restart = spec
		return "", nil
	case "group-order":
		return "", sc.setGroupOrder(t, td)
	case "wait-reasons":
		sc.waitReasons = true
		return "", nil

	case "decide":
		now, err := offsetArg(t, td, "now")
		if err != nil {
			return "", err
		}
		sc.obs.Now = now
		countZones(sc.obs.Deployment, sc.obs.Allocs)
		if !sc.obs.FromFigures {
			// The store keeps the live figures whichever the watcher
			// reads; analysis runs count batches by them.
			sc.obs.Deployment.CountLiveFigures(sc.obs.Allocs)
		}
		sc.obs.InFlight = countInFlight(sc.obs.Allocs)
		if sc.waitReasons {
			countPlaced(sc.obs.Deployment, sc.obs.Allocs)
		}
		sc.last = Decide(sc.obs)
		if !sc.waitReasons {
			sc.last.WaitReasons = analysisReasonsOnly(sc.obs.Deployment, sc.last.WaitReasons)
		}
		return formatDecision(sc.last), nil
	case "apply":
		sc.apply()
		return sc.show(), nil
	case "health":
		return "", sc.setHealth(t, td)
	case "figures":
		sc.useFigures()
		return "", nil
	case "not-serving":
		sc.obs.NotServing = map[string]int{}
		for _, arg := range td.CmdArgs {
			n, err := strconv.Atoi(arg.Vals[0])
			if err != nil {
				return "", err
			}
			sc.obs.NotServing[arg.Key] = n
		}
		return "", nil
	case "revert-of":
		var v uint64
		td.ScanArgs(t, "version", &v)
		if td.HasArg("job-only") {
			sc.obs.Job.RevertOf = &v
		} else {
			sc.obs.Deployment.RevertOf = &v
		}
		return "", nil
	case "pause", "resume":
		now, err := offsetArg(t, td, "now")
		if err != nil {
			return "", err
		}
		d, err := Pause(sc.obs.Deployment, td.Cmd == "pause", now)
		if err != nil {
			return "", err
		}
		if td.Cmd == "resume" {
			structs.ApplyAnalysisRequest(d, &structs.DeploymentAnalysisRequest{Updates: ResumedAnalyses(sc.obs.Deployment)})
		}
		sc.obs.Deployment = d
		return sc.show(), nil
	case "fail":
		now, err := offsetArg(t, td, "now")
		if err != nil {
			return "", err
		}
		d, revert, err := Fail(sc.obs.Deployment, sc.obs.Job, sc.obs.StableJob, now)
		if err != nil {
			return "", err
		}
		sc.obs.Deployment = d
		out := sc.show()
		if revert != nil {
			out += fmt.Sprintf("revert-to: version %d (revert of %d)\n", revert.Version, *revert.RevertOf)
		}
		return out, nil
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

func (sc *scenario) newDeployment(t *testing.T, td *datadriven.TestData) {
	version := uint64(1)
	td.MaybeScanArgs(t, "version", &version)
	status := structs.DeploymentStatusRunning
	td.MaybeScanArgs(t, "status", &status)
	desc := ""
	td.MaybeScanArgs(t, "desc", &desc)
	var created int64
	if td.HasArg("created") {
		at, err := offsetArg(t, td, "created")
		if err != nil {
			t.Fatal(err)
		}
		created = at.UnixNano()
	}
	job := &structs.Job{
		ID: "web", Namespace: structs.DefaultNamespace, Type: structs.JobTypeService,
		Priority: 50, Version: version, CreateIndex: 10, Meta: map[string]string{"spec": fmt.Sprint(version)},
	}
	sc.obs = Observation{
		Deployment: &structs.Deployment{
			ID: "d1", Namespace: job.Namespace, JobID: job.ID, JobVersion: version, JobCreateIndex: 10,
			Status: status, StatusDescription: descriptions[desc], TaskGroups: map[string]*structs.DeploymentState{},
			CreateTime: created,
		},
		Job:       job,
		LatestJob: job,
	}
}

// descriptions maps short names in the scenario files to descriptions.
var descriptions = map[string]string{
	"":                "",
	"running":         structs.DeploymentStatusDescriptionRunning,
	"needs-promotion": structs.DeploymentStatusDescriptionRunningNeedsPromotion,
	"auto-promotion":  structs.DeploymentStatusDescriptionRunningAutoPromotion,
	"paused":          structs.DeploymentStatusDescriptionPaused,
}

func (sc *scenario) addGroup(t *testing.T, td *datadriven.TestData) error {
	var name string
	td.ScanArgs(t, "name", &name)
	s := &structs.DeploymentState{
		AutoRevert:  td.HasArg("auto-revert"),
		AutoPromote: td.HasArg("auto-promote"),
		Promoted:    td.HasArg("promoted"),
		AllPlaced:   td.HasArg("all-placed"),
	}
	td.MaybeScanArgs(t, "total", &s.DesiredTotal)
	td.MaybeScanArgs(t, "canaries", &s.DesiredCanaries)
	s.ProgressDeadline = 10 * time.Minute
	if td.HasArg("pd") {
		var v string
		td.ScanArgs(t, "pd", &v)
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		s.ProgressDeadline = d
	}
	if td.HasArg("rpb") {
		rpb, err := offsetArg(t, td, "rpb")
		if err != nil {
			return err
		}
		s.RequireProgressBy = rpb
	}
	policy := structs.DefaultReschedulePolicy(structs.JobTypeService)
	if td.HasArg("reschedule") {
		var v string
		td.ScanArgs(t, "reschedule", &v)
		p, err := parsePolicy(v)
		if err != nil {
			return err
		}
		policy = p
	}
	u, err := updateArgs(t, td)
	if err != nil {
		return err
	}
	u.AutoRevert, u.AutoPromote, u.Canary, u.ProgressDeadline = s.AutoRevert, s.AutoPromote, s.DesiredCanaries, s.ProgressDeadline
	if !td.HasArg("unrecorded") {
		// As the scheduler records it; "unrecorded" stands for a
		// deployment stored before the field existed.
		s.OnFailure = u.OnFailure
	}
	td.MaybeScanArgs(t, "failures", &s.UnhealthyAllocs)
	td.MaybeScanArgs(t, "failures-at-pause", &s.FailuresAtPause)
	td.MaybeScanArgs(t, "checkpoints-reached", &s.CheckpointsReached)
	// Groups one at a time: order=N state=waiting|rolling|done|failed
	// done-at=OFFSET, as the scheduler and the watcher write them.
	td.MaybeScanArgs(t, "order", &s.Order)
	td.MaybeScanArgs(t, "state", &s.State)
	if td.HasArg("done-at") {
		at, err := offsetArg(t, td, "done-at")
		if err != nil {
			return err
		}
		s.DoneAt = at
	}
	sc.obs.Deployment.TaskGroups[name] = s
	sc.obs.Job.TaskGroups = append(sc.obs.Job.TaskGroups, &structs.TaskGroup{
		Name: name, Count: s.DesiredTotal, ReschedulePolicy: policy, Update: u,
	})
	return nil
}

func parsePolicy(v string) (*structs.ReschedulePolicy, error) {
	switch v {
	case "unlimited":
		return &structs.ReschedulePolicy{Unlimited: true}, nil
	case "none":
		return nil, nil
	}
	n, iv, ok := strings.Cut(v, "/")
	if !ok {
		return nil, fmt.Errorf("bad reschedule policy %q", v)
	}
	attempts, err := strconv.Atoi(n)
	if err != nil {
		return nil, err
	}
	interval, err := time.ParseDuration(iv)
	if err != nil {
		return nil, err
	}
	return &structs.ReschedulePolicy{Attempts: attempts, Interval: interval}, nil
}

func (sc *scenario) addAlloc(t *testing.T, td *datadriven.TestData) error {
	var id, group string
	td.ScanArgs(t, "id", &id)
	td.ScanArgs(t, "group", &group)
	index := len(sc.obs.Allocs)
	td.MaybeScanArgs(t, "index", &index)
	a := &structs.Allocation{
		ID: id, Name: structs.AllocName("web", group, index), JobID: "web", Job: sc.obs.Job,
		TaskGroup: group, DeploymentID: sc.obs.Deployment.ID,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
		DeploymentStatus: &structs.AllocDeploymentStatus{Canary: td.HasArg("canary")},
	}
	td.MaybeScanArgs(t, "modify", &a.DeploymentStatus.ModifyIndex)
	a.Zone = zoneName(t, td, "zone")
	var health string
	td.MaybeScanArgs(t, "health", &health)
	switch health {
	case "healthy", "unhealthy":
		h := health == "healthy"
		a.DeploymentStatus.Healthy = &h
	case "":
	default:
		return fmt.Errorf("bad health %q", health)
	}
	if td.HasArg("stopped") {
		a.DesiredStatus = structs.AllocDesiredStatusStop
	}
	if td.HasArg("failed") {
		a.ClientStatus = structs.AllocClientStatusFailed
	}
	td.MaybeScanArgs(t, "next", &a.NextAllocation)
	if td.HasArg("marked") {
		yes := true
		a.DesiredTransition.Reschedule = &yes
	}
	var reschedules int
	td.MaybeScanArgs(t, "reschedules", &reschedules)
	if reschedules > 0 {
		a.RescheduleTracker = &structs.RescheduleTracker{}
		for range reschedules {
			a.RescheduleTracker.Events = append(a.RescheduleTracker.Events,
				&structs.RescheduleEvent{RescheduleTime: t0.UnixNano(), PrevAllocID: "older"})
		}
	}
	if a.IsCanary() {
		s := sc.obs.Deployment.TaskGroups[group]
		if s != nil {
			s.PlacedCanaries = append(s.PlacedCanaries, id)
		}
	}
	if s := sc.obs.Deployment.TaskGroups[group]; s != nil {
		s.PlacedAllocs++
		countVerdict(s, a.Zone, health)
	}
	sc.obs.Allocs = append(sc.obs.Allocs, a)
	return nil
}

// addAllocs adds count allocs of a group in a zone, named PREFIX1...:
// "allocs group=web zone=a count=8 prefix=a health=unhealthy", with
// "replaced" for failed ones the scheduler has replaced already.
func (sc *scenario) addAllocs(t *testing.T, td *datadriven.TestData) error {
	var group, prefix, health string
	var count int
	td.ScanArgs(t, "group", &group)
	td.ScanArgs(t, "count", &count)
	td.ScanArgs(t, "prefix", &prefix)
	td.MaybeScanArgs(t, "health", &health)
	zone := zoneName(t, td, "zone")
	s := sc.obs.Deployment.TaskGroups[group]
	if s == nil {
		return fmt.Errorf("no group %q", group)
	}
	for range count {
		a := &structs.Allocation{
			ID: fmt.Sprintf("%s%d", prefix, len(sc.obs.Allocs)+1), JobID: "web", Job: sc.obs.Job,
			Name: structs.AllocName("web", group, len(sc.obs.Allocs)), TaskGroup: group, Zone: zone,
			DeploymentID: sc.obs.Deployment.ID, DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning, DeploymentStatus: &structs.AllocDeploymentStatus{},
		}
		switch health {
		case "healthy", "unhealthy":
			h := health == "healthy"
			a.DeploymentStatus.Healthy = &h
		case "":
		default:
			return fmt.Errorf("bad health %q", health)
		}
		if td.HasArg("replaced") {
			a.NextAllocation = a.ID + "-next"
			a.ClientStatus = structs.AllocClientStatusFailed
		}
		s.PlacedAllocs++
		countVerdict(s, zone, health)
		sc.obs.Allocs = append(sc.obs.Allocs, a)
	}
	return nil
}

func (sc *scenario) setLatest(t *testing.T, td *datadriven.TestData) error {
	switch {
	case td.HasArg("purged"):
		sc.obs.LatestJob = nil
	case td.HasArg("stop"):
		j := sc.obs.Job.Copy()
		j.Stop = true
		sc.obs.LatestJob = j
	case td.HasArg("recreated"):
		j := sc.obs.Job.Copy()
		j.CreateIndex = 99
		j.Version = 0
		sc.obs.LatestJob = j
	case td.HasArg("scaled"):
		// A newer version whose groups' counts alone changed (job scale).
		j := sc.obs.Job.Copy()
		j.Version++
		for _, tg := range j.TaskGroups {
			tg.Count++
		}
		sc.obs.LatestJob = j
	case td.HasArg("version"):
		j := sc.obs.Job.Copy()
		td.ScanArgs(t, "version", &j.Version)
		j.Meta = map[string]string{"spec": fmt.Sprint(j.Version)}
		sc.obs.LatestJob = j
	default:
		return fmt.Errorf("latest: want purged, stop, recreated or version=N")
	}
	return nil
}

func (sc *scenario) setStable(t *testing.T, td *datadriven.TestData) {
	if td.HasArg("none") {
		sc.obs.StableJob = nil
		return
	}
	j := sc.obs.Job.Copy()
	td.ScanArgs(t, "version", &j.Version)
	j.Stable = true
	if !td.HasArg("same-spec") {
		j.Meta = map[string]string{"spec": fmt.Sprint(j.Version)}
	}
	sc.obs.StableJob = j
}

// offsetArg reads a duration argument as a time relative to t0.
func offsetArg(t *testing.T, td *datadriven.TestData, key string) (time.Time, error) {
	var v string
	td.ScanArgs(t, key, &v)
	d, err := time.ParseDuration(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", key, err)
	}
	return t0.Add(d), nil
}

// formatDecision prints a decision with ResumeAt and WakeAt relative to
// t0.
func formatDecision(d Decision) string {
	wake, resume, doneAt, groupDoneAt, measure := d.WakeAt, d.ResumeAt, d.ZoneDoneAt, d.GroupDoneAt, d.Measure
	d.WakeAt, d.ResumeAt, d.ZoneDoneAt, d.GroupDoneAt, d.Measure = time.Time{}, time.Time{}, nil, nil, nil
	s := d.String()
	if len(measure) > 0 {
		s += "measure: " + formatMeasureRel(measure) + "\n"
	}
	if len(doneAt) > 0 {
		s = strings.TrimSuffix(s, "change: none\n")
		s += "zone-done-at: " + formatZones(doneAt, func(t time.Time) string { return "+" + t.Sub(t0).String() }) + "\n"
	}
	if len(groupDoneAt) > 0 {
		s = strings.TrimSuffix(s, "change: none\n")
		s += "group-done-at: " + formatMap(groupDoneAt, func(t time.Time) string { return "+" + t.Sub(t0).String() }) + "\n"
	}
	if !resume.IsZero() {
		s += fmt.Sprintf("resume-at: +%s\n", resume.Sub(t0))
	}
	if !wake.IsZero() {
		s += fmt.Sprintf("wake: +%s\n", wake.Sub(t0))
	}
	return s
}

// countVerdict counts a first health verdict in the group's counters, and
// an unhealthy one in its zone's failures, as the store does.
func countVerdict(s *structs.DeploymentState, zone, health string) {
	switch health {
	case "healthy":
		s.HealthyAllocs++
	case "unhealthy":
		s.UnhealthyAllocs++
		if z := s.Zone(zone); z != nil {
			z.Failed++
		}
	}
}

// setHealth records a health report for an alloc: "health id=a1
// healthy|unhealthy"; a first verdict moves the group's counters.
func (sc *scenario) setHealth(t *testing.T, td *datadriven.TestData) error {
	var id string
	td.ScanArgs(t, "id", &id)
	for _, a := range sc.obs.Allocs {
		if a.ID != id {
			continue
		}
		health := "unhealthy"
		if td.HasArg("healthy") {
			health = "healthy"
		}
		h := health == "healthy"
		if a.DeploymentStatus.Healthy == nil {
			countVerdict(sc.obs.Deployment.TaskGroups[a.TaskGroup], a.Zone, health)
		}
		a.DeploymentStatus.Healthy = &h
		if td.HasArg("modify") {
			// The index of the entry that recorded the verdict.
			td.ScanArgs(t, "modify", &a.ModifyIndex)
			a.DeploymentStatus.ModifyIndex = a.ModifyIndex
		}
		if td.HasArg("failed") {
			a.ClientStatus = structs.AllocClientStatusFailed
		}
		return nil
	}
	return fmt.Errorf("no alloc %q", id)
}

// useFigures makes the next decisions read the live figures, counted from
// the allocs as the store keeps them, instead of the allocs.
func (sc *scenario) useFigures() {
	sc.obs.Deployment.CountLiveFigures(sc.obs.Allocs)
	sc.obs.FromFigures = true
}

// apply writes the latest decision into the scenario as the store would:
// status and description with the pause times (from the decision's time),
// the bookkeeping, a resume's new progress deadlines, a promotion and the
// marks for replacement.
func (sc *scenario) apply() {
	dec, now := sc.last, sc.obs.Now
	d := sc.obs.Deployment.Copy()
	if dec.Promote {
		for _, name := range dec.PromoteGroups {
			s := d.TaskGroups[name]
			s.Promoted = true
			s.RequireProgressBy = now.Add(s.ProgressDeadline)
		}
	}
	if dec.writesStatus() {
		u := statusUpdate(d, dec)
		wasPaused := d.Status == structs.DeploymentStatusPaused
		switch {
		case u.Status == structs.DeploymentStatusPaused && !wasPaused:
			d.PausedAt, d.ResumeAt = now, u.ResumeAt
		case u.Status == structs.DeploymentStatusPaused:
			d.ResumeAt = u.ResumeAt
		default:
			d.PausedAt, d.ResumeAt = time.Time{}, time.Time{}
		}
		if wasPaused && u.Status == structs.DeploymentStatusRunning {
			for _, s := range d.TaskGroups {
				if s.ProgressDeadline > 0 {
					s.RequireProgressBy = now.Add(s.ProgressDeadline)
				}
			}
		}
		for name, n := range u.CheckpointsReached {
			d.TaskGroups[name].CheckpointsReached = n
		}
		for name, n := range u.FailuresAtPause {
			d.TaskGroups[name].FailuresAtPause = n
		}
		for name, zones := range u.ZoneStates {
			s := d.TaskGroups[name]
			for zone, st := range zones {
				z := s.Zone(zone)
				if z.State == structs.ZoneStateWaiting && st == structs.ZoneStateRolling {
					s.RequireProgressBy = later(s.RequireProgressBy, now.Add(s.ProgressDeadline))
				}
				z.State = st
			}
		}
		for name, zones := range u.ZoneDoneAt {
			for zone, at := range zones {
				d.TaskGroups[name].Zone(zone).DoneAt = at
			}
		}
		for name, st := range u.GroupStates {
			s := d.TaskGroups[name]
			if s.State == structs.GroupStateWaiting && st == structs.GroupStateRolling {
				s.RequireProgressBy = later(s.RequireProgressBy, now.Add(s.ProgressDeadline))
			}
			s.State = st
		}
		for name, at := range u.GroupDoneAt {
			d.TaskGroups[name].DoneAt = at
		}
		for name, r := range u.WaitReasons {
			d.TaskGroups[name].WaitReason = r
		}
		d.Status, d.StatusDescription = u.Status, u.StatusDescription
	}
	structs.ApplyAnalysisRequest(d, &structs.DeploymentAnalysisRequest{Updates: dec.Analyses, WaitReasons: dec.WaitReasons})
	sc.obs.Deployment = d
	for _, id := range dec.MarkForReschedule {
		for _, a := range sc.obs.Allocs {
			if a.ID == id {
				yes := true
				a.DesiredTransition.Reschedule = &yes
			}
		}
	}
}
