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
	switch td.Cmd {
	case "deployment":
		sc.newDeployment(t, td)
		return "", nil
	case "group":
		return "", sc.addGroup(t, td)
	case "alloc":
		return "", sc.addAlloc(t, td)
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
	case "decide":
		now, err := offsetArg(t, td, "now")
		if err != nil {
			return "", err
		}
		sc.obs.Now = now
		return formatDecision(Decide(sc.obs)), nil
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
	sc.obs.Deployment.TaskGroups[name] = s
	sc.obs.Job.TaskGroups = append(sc.obs.Job.TaskGroups, &structs.TaskGroup{
		Name: name, Count: s.DesiredTotal, ReschedulePolicy: policy,
	})
	return nil
}

// parsePolicy reads "unlimited", "none" or "ATTEMPTS/INTERVAL".
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
	}
	sc.obs.Allocs = append(sc.obs.Allocs, a)
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

// formatDecision prints a decision with WakeAt relative to t0.
func formatDecision(d Decision) string {
	wake := d.WakeAt
	d.WakeAt = time.Time{}
	s := d.String()
	if !wake.IsZero() {
		s += fmt.Sprintf("wake: +%s\n", wake.Sub(t0))
	}
	return s
}
