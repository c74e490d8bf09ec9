package deployment

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// Analysis runs (website/rollouts.md, part E). Decide reads the runs the
// deployment holds and the analyses of the job's update blocks, and
// answers:
//   - which runs start now (Decision.Analyses): a canary run once every
//     canary of the group is healthy; an each_batch run once the group's
//     healthy new allocs are more than its last run covered and none is in
//     flight (a batch is healthy), labelled with its batch and zone; a
//     background run from the first healthy new alloc. A revert's
//     deployment runs none, a job's first version only background ones
//     (structs.AnalysesFor);
//   - which measurements are due (Decision.Measure): a running run's
//     start plus initial_delay, then its last measurement's time plus
//     interval; a later one sets WakeAt. The leader takes them outside
//     Decide (Watcher.measure) and writes each through Raft;
//   - what gates: an each_batch run not cleared, or a healthy batch not
//     yet covered by one, holds the group (structs.AnalysisHold — the
//     scheduler holds its batches by the same rule): the group is not done,
//     so a deployment succeeds only after its last batch's run, a group of
//     group_order waits, and the next zone does not start; auto_promote
//     waits for the canary runs' success; background runs hold nothing;
//   - outcomes: a failed run is a failure of its group (its on_failure
//     action, description `analysis "errors" failed: …`); an inconclusive
//     one pauses the deployment (`analysis "errors" inconclusive: …`),
//     whatever on_failure says. A resume accepts both (ResumedAnalyses), a
//     promotion by hand skips running canary runs (PromotedAnalyses);
//   - a group held by a running each_batch run has the run as its
//     WaitReason (analysisWaitReason, which withWaitReasons asks).

// MeasureDue is a measurement a running run needs now.
type MeasureDue struct {
	Group string
	// Index is the run's place in the group's Analyses.
	Index    int
	Analysis *structs.Analysis
	// Run is the run as read; the measurement is applied to it.
	Run *structs.AnalysisRun
	// At is when the measurement was due.
	At time.Time
}

// analysesOf returns the analyses the deployment runs for group g.
func analysesOf(obs Observation, g *groupView) []*structs.Analysis {
	if revertOf(obs) != nil {
		return nil
	}
	return structs.AnalysesFor(obs.Deployment, obs.Job, g.update)
}

// specOf returns the analysis named name among as, or nil.
func specOf(as []*structs.Analysis, name string) *structs.Analysis {
	for _, a := range as {
		if a != nil && a.Name == name {
			return a
		}
	}
	return nil
}

// attachAnalyses gives each group the analyses it runs, for done() and
// the promotion rule.
func attachAnalyses(obs Observation, groups []*groupView) {
	for _, g := range groups {
		g.analyses = analysesOf(obs, g)
	}
}

// analysisHolds reports whether an each_batch run holds the group.
func (g *groupView) analysisHolds() bool {
	_, _, hold := structs.AnalysisHold(g.state, g.analyses)
	return hold
}

// analysisRunning reports whether an each_batch run of the group is
// running: its progress deadline does not run out meanwhile.
func (g *groupView) analysisRunning() bool {
	_, r, hold := structs.AnalysisHold(g.state, g.analyses)
	return hold && r != nil && r.Phase == structs.AnalysisPhaseRunning
}

// canaryRunsCleared reports whether every canary analysis of the group
// has a cleared run: until then the group is not auto-promoted.
func (g *groupView) canaryRunsCleared() bool {
	for _, a := range g.analyses {
		if a != nil && a.When == structs.AnalysisWhenCanary && !g.state.LatestRun(a.Name).Cleared() {
			return false
		}
	}
	return true
}

// analysisEnd is the latest time a cleared run of the group ended (its
// last measurement): the group's progress deadline runs from then at the
// earliest, since a run is not a lack of progress. Zero when none.
func (g *groupView) analysisEnd() time.Time {
	var end time.Time
	for _, r := range g.state.Analyses {
		if r != nil && r.Cleared() && r.LastAt().After(end) {
			end = r.LastAt()
		}
	}
	return end
}

// analysisFailures lists the groups' failed runs (the latest run of each
// analysis), as failures of their groups.
func analysisFailures(groups []*groupView) []failure {
	var out []failure
	for _, g := range groups {
		for _, a := range g.analyses {
			r := g.state.LatestRun(a.Name)
			if r == nil || r.Phase != structs.AnalysisPhaseFailed {
				continue
			}
			desc := structs.AnalysisFailedDescription(a, r)
			out = append(out, failure{group: g, kind: failureAnalysis, pause: desc, fail: desc})
		}
	}
	return out
}

// inconclusiveRun returns the description of the first inconclusive run
// (by group name, then analysis), for the pause it calls for.
func inconclusiveRun(groups []*groupView) (string, bool) {
	for _, g := range groups {
		for _, a := range g.analyses {
			if r := g.state.LatestRun(a.Name); r != nil && r.Phase == structs.AnalysisPhaseInconclusive {
				return structs.AnalysisInconclusiveDescription(a, r), true
			}
		}
	}
	return "", false
}

// currentZone is the zone a group rolls now: the first zone rolling, else
// the last one done; "" without zones.
func currentZone(s *structs.DeploymentState) string {
	name := ""
	for _, z := range s.Zones {
		if z == nil {
			continue
		}
		switch z.State {
		case structs.ZoneStateRolling, structs.ZoneStatePaused:
			return z.Name
		case structs.ZoneStateDone:
			name = z.Name
		}
	}
	return name
}

// startRuns returns the runs that start at now on a running deployment
// (see the comment at the top of the file), in group and analysis order.
func startRuns(obs Observation, groups []*groupView) []*structs.AnalysisRunUpdate {
	var out []*structs.AnalysisRunUpdate
	for _, g := range groups {
		if g.waiting() {
			continue
		}
		s := g.state
		n := len(s.Analyses)
		start := func(r *structs.AnalysisRun) {
			r.Phase, r.StartedAt = structs.AnalysisPhaseRunning, obs.Now
			out = append(out, &structs.AnalysisRunUpdate{Group: g.name, Index: n, Run: r})
			n++
		}
		for _, a := range g.analyses {
			if a == nil {
				continue
			}
			last := s.LatestRun(a.Name)
			switch a.When {
			case structs.AnalysisWhenCanary:
				if last == nil && s.DesiredCanaries > 0 && !s.Promoted && g.canariesHealthy() {
					start(&structs.AnalysisRun{Name: a.Name, When: a.When})
				}
			case structs.AnalysisWhenBackground:
				if last == nil && s.LiveHealthyAllocs+g.healthy > 0 {
					start(&structs.AnalysisRun{Name: a.Name, When: a.When})
				}
			case structs.AnalysisWhenEachBatch:
				if g.awaitingPromotion() {
					continue
				}
				last = s.LatestEachBatchRun(a.Name)
				if last != nil && !last.Cleared() || s.LiveHealthyAllocs <= s.BatchCovered(last) || obs.InFlight[g.name] > 0 {
					continue
				}
				batch := 1
				if last != nil {
					batch = last.Batch + 1
				}
				start(&structs.AnalysisRun{Name: a.Name, When: a.When, Batch: batch,
					Zone: currentZone(s), Healthy: s.LiveHealthyAllocs})
			}
		}
	}
	return out
}

// dueMeasurements lists the measurements the running runs need at now,
// and the earliest later one (zero if none).
func dueMeasurements(obs Observation, groups []*groupView) ([]MeasureDue, time.Time) {
	var due []MeasureDue
	var wake time.Time
	for _, g := range groups {
		for i, r := range g.state.Analyses {
			if r == nil || r.Phase != structs.AnalysisPhaseRunning {
				continue
			}
			a := specOf(g.analyses, r.Name)
			if a == nil {
				continue
			}
			at := r.NextMeasurement(a)
			if at.After(obs.Now) {
				wake = earliest(wake, at)
				continue
			}
			due = append(due, MeasureDue{Group: g.name, Index: i, Analysis: a, Run: r, At: at})
		}
	}
	return due, wake
}

// endBackground ends the running background runs of a deployment that is
// successful: successful too.
func endBackground(groups []*groupView) []*structs.AnalysisRunUpdate {
	var out []*structs.AnalysisRunUpdate
	for _, g := range groups {
		for i, r := range g.state.Analyses {
			if r == nil || r.When != structs.AnalysisWhenBackground || r.Phase != structs.AnalysisPhaseRunning {
				continue
			}
			c := r.Copy()
			c.Phase = structs.AnalysisPhaseSuccessful
			out = append(out, &structs.AnalysisRunUpdate{Group: g.name, Index: i, Run: c,
				PrevPhase: r.Phase, PrevAt: r.LastAt()})
		}
	}
	return out
}

// analysisWaitReason is the group's wait reason as far as analysis goes:
// the running each_batch run that holds its next batch (started stands
// for runs this decision starts); "" when none does. ok is false when the
// group's wait reason is not analysis' to set (another reason is
// written, and no run holds the group).
func analysisWaitReason(g *groupView, started []*structs.AnalysisRunUpdate) (reason string, ok bool) {
	for _, a := range g.analyses {
		if a == nil || a.When != structs.AnalysisWhenEachBatch {
			continue
		}
		r := g.state.LatestEachBatchRun(a.Name)
		for _, u := range started {
			if u.Group == g.name && u.Run.Name == a.Name && u.Run.When == a.When {
				r = u.Run
			}
		}
		if r != nil && r.Phase == structs.AnalysisPhaseRunning {
			return structs.AnalysisRunningReason(a, r), true
		}
	}
	return "", structs.IsAnalysisDescription(g.state.WaitReason)
}

// analysisInto adds to dec what the runs call for on a deployment with
// status (after dec): the runs that start (while running), the
// measurements due (while running) with their wake-up, and the background
// runs a success ends. The wait reasons, an analysis run's among them
// (analysisWaitReason), are withWaitReasons'.
func analysisInto(obs Observation, groups []*groupView, dec Decision) Decision {
	status := obs.Deployment.Status
	if dec.Status != "" {
		status = dec.Status
	}
	switch status {
	case structs.DeploymentStatusRunning:
		if obs.Deployment.Status == structs.DeploymentStatusRunning {
			dec.Analyses = append(dec.Analyses, startRuns(obs, groups)...)
			var wake time.Time
			dec.Measure, wake = dueMeasurements(obs, groups)
			for _, u := range dec.Analyses {
				if a := specOf(groupAnalyses(groups, u.Group), u.Run.Name); a != nil {
					wake = earliest(wake, u.Run.NextMeasurement(a))
				}
			}
			dec.WakeAt = earliest(dec.WakeAt, wake)
		}
	case structs.DeploymentStatusSuccessful:
		dec.Analyses = append(dec.Analyses, endBackground(groups)...)
	}
	return dec
}

func groupAnalyses(groups []*groupView, name string) []*structs.Analysis {
	for _, g := range groups {
		if g.name == name {
			return g.analyses
		}
	}
	return nil
}

// ResumedAnalyses returns what resuming d does to its runs: each latest
// run that is inconclusive or failed (a pause on_failure) is accepted, so
// that the rollout goes on. Nil when d is not paused or has none.
func ResumedAnalyses(d *structs.Deployment) []*structs.AnalysisRunUpdate {
	if d == nil || d.Status != structs.DeploymentStatusPaused {
		return nil
	}
	return endRuns(d, nil, structs.AnalysisPhaseAccepted, structs.AnalysisPhaseInconclusive, structs.AnalysisPhaseFailed)
}

// PromotedAnalyses returns what promoting d's groups by hand (all canary
// groups when groups is empty) does to their runs: each running canary
// run is skipped.
func PromotedAnalyses(d *structs.Deployment, groups []string) []*structs.AnalysisRunUpdate {
	if d == nil {
		return nil
	}
	var only map[string]bool
	if len(groups) > 0 {
		only = map[string]bool{}
		for _, g := range groups {
			only[g] = true
		}
	}
	var out []*structs.AnalysisRunUpdate
	for _, u := range endRuns(d, only, structs.AnalysisPhaseSkipped, structs.AnalysisPhaseRunning) {
		if u.Run.When == structs.AnalysisWhenCanary {
			out = append(out, u)
		}
	}
	return out
}

// endRuns sets phase on the latest run of each analysis of d's groups
// (those of only, when set) whose phase is one of from.
func endRuns(d *structs.Deployment, only map[string]bool, phase string, from ...string) []*structs.AnalysisRunUpdate {
	var out []*structs.AnalysisRunUpdate
	for _, name := range sortedKeys(d.TaskGroups) {
		s := d.TaskGroups[name]
		if s == nil || (only != nil && !only[name]) {
			continue
		}
		latest := map[string]int{}
		for i, r := range s.Analyses {
			if r != nil {
				latest[r.Name] = i
			}
		}
		idx := make([]int, 0, len(latest))
		for _, i := range latest {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			r := s.Analyses[i]
			ok := false
			for _, f := range from {
				ok = ok || r.Phase == f
			}
			if !ok {
				continue
			}
			c := r.Copy()
			c.Phase = phase
			out = append(out, &structs.AnalysisRunUpdate{Group: name, Index: i, Run: c, PrevPhase: r.Phase, PrevAt: r.LastAt()})
		}
	}
	return out
}

// formatRunUpdates renders run updates for Decision.String.
func formatRunUpdates(us []*structs.AnalysisRunUpdate) string {
	parts := make([]string, len(us))
	for i, u := range us {
		r := u.Run
		p := fmt.Sprintf("%s/%s#%d %s", u.Group, r.Name, u.Index, r.Phase)
		if r.Batch > 0 {
			p += fmt.Sprintf(" batch=%d", r.Batch)
		}
		if r.Zone != "" {
			p += " zone=" + r.Zone
		}
		if r.Healthy > 0 {
			p += fmt.Sprintf(" healthy=%d", r.Healthy)
		}
		parts[i] = p
	}
	return strings.Join(parts, "; ")
}

// formatMeasure renders due measurements for Decision.String.
func formatMeasure(ms []MeasureDue) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s/%s#%d at %s", m.Group, m.Run.Name, m.Index, m.At.UTC().Format(time.RFC3339Nano))
	}
	return strings.Join(parts, "; ")
}
