package deployment

import (
	"fmt"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// What holds a group (website/rollouts.md, "What a rollout waits on").
// Every decision on an active deployment carries, per group, the
// watcher's own sentence for why the group's next batch has not started
// (DeploymentState.WaitReason), so that the CLI and the UI show it
// instead of working it out again. Decision.WaitReasons lists only the
// groups whose sentence changes, so that a steady deployment writes
// nothing; a sentence names the policy and its figures, and figures that
// move with every health verdict are left out of it except while a small
// first batch, a zone's last batch or canaries are watched (a first
// version of 100,000 allocs must not write its sentence 100,000 times).

// waitFacts is what a group's sentence depends on, gathered from the
// decision (waitFactsOf) so that waitReason is a table of plain cases.
type waitFacts struct {
	// Status and Description are the deployment's after the decision;
	// ResumeAt the end of a checkpoint delay (zero: an operator resumes).
	Status, Description string
	ResumeAt            time.Time
	// Now is the time of the decision.
	Now time.Time

	Group string
	// Done: the group reached its goal (nothing holds it).
	Done bool
	// Checkpoint is the group's last checkpoint reached, as written
	// ("50%"); "" when none.
	Checkpoint string

	// Group order: WaitsFor is the group just before a group that waits
	// its turn; WaitsUntil, when that group is done, the end of
	// pause_between_groups (PauseBetweenGroups).
	WaitsFor           string
	WaitsUntil         time.Time
	PauseBetweenGroups time.Duration

	// Analysis is the sentence of the analysis run that holds the group
	// (analysisHold); "" when none.
	Analysis string

	// Canaries awaiting promotion.
	Canaries, HealthyCanaries int
	AwaitingPromotion         bool
	AutoPromote               bool

	// Zones: the zone that holds the group's next batch, if any.
	Zone *zoneWait

	// FirstBatch is first_batch resolved (0: none or not applied);
	// Healthy the group's healthy new allocs, InFlight those placed and
	// not yet healthy nor failed.
	FirstBatch int
	Healthy    int
	InFlight   int
	// MaxParallel is the batch width; MinHealthyTime and Stagger the
	// update block's.
	MaxParallel    int
	MinHealthyTime time.Duration
	Stagger        time.Duration
}

// zoneWait is the zone that holds a group's next batch and why.
type zoneWait struct {
	Name string
	// PauseUntil, when set, is the end of pause_between_zones before zone
	// Name starts (Pause long).
	PauseUntil time.Time
	Pause      time.Duration
	// After, when set, is the zone Name waits for to reach its
	// success_threshold (Threshold, written as the job does: "100%"),
	// AfterHealthy of AfterSize healthy.
	After                   string
	AfterHealthy, AfterSize int
	Threshold               string
	// Budget, when InUse reaches it, is the zone's disruption budget
	// taken by allocs in flight and failed.
	Budget, InUse int
}

// waitReason is a group's sentence: empty when nothing holds it. The
// first case that applies wins.
func waitReason(f waitFacts) string {
	switch {
	case f.Status != structs.DeploymentStatusRunning && f.Status != structs.DeploymentStatusPaused:
		return ""
	case f.Done:
		return ""
	case f.Status == structs.DeploymentStatusPaused:
		return pausedReason(f)
	case f.WaitsFor != "" && !f.WaitsUntil.IsZero() && f.Now.Before(f.WaitsUntil):
		return fmt.Sprintf("group_order: pause_between_groups %s after group %s, until %s", short(f.PauseBetweenGroups), f.WaitsFor, clock(f.WaitsUntil))
	case f.WaitsFor != "":
		return fmt.Sprintf("group_order: waits for group %s to be done", f.WaitsFor)
	case f.Analysis != "":
		return f.Analysis
	case f.AwaitingPromotion && f.HealthyCanaries < f.Canaries:
		return fmt.Sprintf("canaries: %d of %d healthy", f.HealthyCanaries, f.Canaries)
	case f.AwaitingPromotion && f.AutoPromote:
		return fmt.Sprintf("canaries: %d of %d healthy, waiting for automatic promotion", f.HealthyCanaries, f.Canaries)
	case f.AwaitingPromotion:
		return fmt.Sprintf("canaries: %d of %d healthy, waiting for promotion (deployment promote)", f.HealthyCanaries, f.Canaries)
	case f.FirstBatch > 0 && f.Healthy < f.FirstBatch && f.Healthy+f.InFlight >= f.FirstBatch:
		return fmt.Sprintf("first batch: %d of %d healthy", f.Healthy, f.FirstBatch)
	case f.Zone != nil:
		return zoneReason(f.Zone)
	case f.InFlight == 0 && f.Stagger > 0:
		return fmt.Sprintf("stagger: %s between batches", short(f.Stagger))
	}
	// Otherwise the batch in flight holds the next one: the sentence does
	// not count its allocs, so that it is written once per group.
	return fmt.Sprintf("batch in flight: new allocations healthy for min_healthy_time %s (max_parallel %d)", short(f.MinHealthyTime), f.MaxParallel)
}

// pausedReason is the sentence of a paused deployment, from its
// description: a checkpoint, an operator's pause, or a failure whose
// on_failure is "pause" (the description names the policy and figures).
func pausedReason(f waitFacts) string {
	desc := f.Description
	switch {
	case f.Checkpoint != "" && strings.HasPrefix(desc, fmt.Sprintf("Deployment paused at checkpoint %s of group %s ", f.Checkpoint, f.Group)):
		if !f.ResumeAt.IsZero() {
			return fmt.Sprintf("checkpoint %s reached: resumes at %s (checkpoint_delay)", f.Checkpoint, clock(f.ResumeAt))
		}
		return fmt.Sprintf("checkpoint %s reached: resume to continue", f.Checkpoint)
	case strings.HasPrefix(desc, "Deployment paused at checkpoint "):
		return "deployment paused at checkpoint " + strings.TrimPrefix(desc, "Deployment paused at checkpoint ") + ": resume to continue"
	case desc == structs.DeploymentStatusDescriptionPaused || desc == "":
		return "deployment paused by an operator: resume to continue"
	case strings.HasPrefix(desc, "Deployment paused: "):
		return "paused: " + strings.TrimPrefix(desc, "Deployment paused: ") + ": resume to continue"
	case strings.HasPrefix(desc, "Deployment "):
		return strings.TrimPrefix(desc, "Deployment ") + ": resume to continue"
	}
	return desc + ": resume to continue"
}

// zoneReason is the sentence of a group held by one of its zones.
func zoneReason(z *zoneWait) string {
	switch {
	case !z.PauseUntil.IsZero():
		return fmt.Sprintf("zone %q waits: pause_between_zones %s, until %s", z.Name, short(z.Pause), clock(z.PauseUntil))
	case z.After != "":
		return fmt.Sprintf("zone %q waits for zone %q: %d of %d healthy, success_threshold %s", z.Name, z.After, z.AfterHealthy, z.AfterSize, z.Threshold)
	}
	return fmt.Sprintf("zone %q waits: %d of %d allowed unavailable in use", z.Name, z.InUse, z.Budget)
}

// short renders a duration as a job writes it: "1m", not "1m0s".
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// clock renders a time of day in UTC for a sentence.
func clock(t time.Time) string {
	return t.UTC().Format("15:04:05 UTC")
}

// withWaitReasons sets dec.WaitReasons: the groups whose sentence after
// the decision differs from the one the deployment holds. The one place
// where Decide's result gets its sentences.
func withWaitReasons(obs Observation, groups []*groupView, order *groupWork, dec Decision) Decision {
	status, desc := obs.Deployment.Status, obs.Deployment.StatusDescription
	if dec.Status != "" {
		status = dec.Status
	}
	if dec.StatusDescription != "" {
		desc = dec.StatusDescription
	}
	resumeAt := obs.Deployment.ResumeAt
	if dec.Status == structs.DeploymentStatusPaused {
		resumeAt = dec.ResumeAt
	}
	for _, g := range groups {
		f := waitFactsOf(obs, g, order, dec)
		f.Status, f.Description, f.ResumeAt = status, desc, resumeAt
		if r := waitReason(f); r != g.state.WaitReason {
			if dec.WaitReasons == nil {
				dec.WaitReasons = map[string]string{}
			}
			dec.WaitReasons[g.name] = r
		}
	}
	return dec
}

// waitFactsOf gathers a group's facts after the decision dec (the
// zones' and ordered groups' working states are the decision's).
func waitFactsOf(obs Observation, g *groupView, order *groupWork, dec Decision) waitFacts {
	s, u := g.state, g.update
	f := waitFacts{Now: obs.Now, Group: g.name, Healthy: g.healthy,
		Canaries: s.DesiredCanaries, HealthyCanaries: g.healthyCanaries, AutoPromote: s.AutoPromote}
	promoted := s.Promoted || (dec.Promote && containsName(dec.PromoteGroups, g.name))
	// done() counts an analysis run that holds the group; a promotion in
	// this decision counts as done.
	f.Done = g.done() || (promoted && g.healthy >= s.DesiredTotal && !g.analysisHolds())
	f.AwaitingPromotion = g.awaitingPromotion() && !promoted
	f.InFlight = max(0, s.PlacedAllocs-s.HealthyAllocs-s.UnhealthyAllocs)
	reached := s.CheckpointsReached
	if n, ok := dec.CheckpointsReached[g.name]; ok {
		reached = n
	}
	if u != nil {
		f.MaxParallel = u.ParallelFor(s.DesiredTotal)
		f.MinHealthyTime = u.MinHealthyTime
		f.Stagger = u.BatchPause()
		if reached > 0 && reached <= len(u.Checkpoints) {
			f.Checkpoint = u.Checkpoints[reached-1].String()
		}
		if revertOf(obs) == nil && obs.Deployment.JobVersion != 0 && s.DesiredCanaries == 0 {
			f.FirstBatch = u.FirstBatchFor(s.DesiredTotal)
		}
	}
	if og := g.order; og != nil && og.waiting() {
		for i, o := range order.groups {
			if o != og || i == 0 {
				continue
			}
			f.WaitsFor = order.groups[i-1].g.name
			f.PauseBetweenGroups = order.pause
			if at, ready := order.ready(i); ready {
				f.WaitsUntil = at
			}
		}
	}
	f.Zone = g.zones.holding(obs.Now)
	if r, _ := analysisWaitReason(g, dec.Analyses); r != "" {
		f.Analysis = r
	} else {
		f.Analysis = analysisHold(g)
	}
	return f
}

// analysisHold is the sentence of the group's canary run still running,
// which holds its promotion (an each_batch run's is analysisWaitReason;
// a background run holds nothing). It leaves the count of measurements
// out, so that it is written once per run, not at each measurement.
func analysisHold(g *groupView) string {
	runs := g.state.Analyses
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r == nil || r.Phase != structs.AnalysisPhaseRunning || r.When != structs.AnalysisWhenCanary {
			continue
		}
		count := ""
		if a := specOf(g.analyses, r.Name); a != nil {
			count = fmt.Sprintf(": %d measurements, every %s", max(a.Count, 1), short(a.Interval))
		}
		return fmt.Sprintf("analysis %q gates promotion%s", r.Name, count)
	}
	return ""
}

// holding returns the zone that holds the group's next batch: the next
// zone of zone_by_zone while it waits out pause_between_zones, or for
// the zone before it, once every alloc of that one is placed; or the
// rolling zone whose disruption budget is all in use. Nil when none.
func (zg *zoneGroup) holding(now time.Time) *zoneWait {
	if zg == nil {
		return nil
	}
	if i, at, ok := zg.nextStart(); ok && i > 0 && now.Before(at) {
		return &zoneWait{Name: zg.zones[i].Name, PauseUntil: at, Pause: zg.z.PauseBetweenZones}
	}
	for i := range zg.zones {
		z := &zg.zones[i]
		if z.State != structs.ZoneStateRolling {
			continue
		}
		if n, ok := zg.budget(z); ok && z.InFlight+z.Failed >= n {
			return &zoneWait{Name: z.Name, Budget: n, InUse: z.InFlight + z.Failed}
		}
		if zg.z.ByZone() && z.DoneAt.IsZero() && z.Healthy+z.InFlight >= z.Size && i+1 < len(zg.zones) &&
			zg.zones[i+1].State == structs.ZoneStateWaiting {
			threshold := "100%"
			if zg.z.SuccessThreshold != nil {
				threshold = zg.z.SuccessThreshold.String()
			}
			return &zoneWait{Name: zg.zones[i+1].Name, After: z.Name, AfterHealthy: z.Healthy, AfterSize: z.Size, Threshold: threshold}
		}
	}
	return nil
}

func containsName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
