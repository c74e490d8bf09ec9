package deployment

import (
	"time"

	"github.com/droverhq/drover/structs"
)

// StageTracker measures, for the metrics, what a rollout's changes of
// stage cost against its changes of batch. A stage starts when a zone of a
// zone_by_zone group or an ordered group (group_order) turns "rolling"
// from "waiting", or when a paused deployment runs again (a checkpoint
// delay that ended, a resume). Its start time is measured from the health
// report that completed the stage before (the latest report that recorded
// a healthy verdict in the deployment, stamped by the leader) or, for a
// pause, from its end (ResumeAt, or the resume's write), to the plan that
// places the deployment's next allocations (their CreateTime, the plan
// applier's stamp). A batch change is measured the same way within a
// stage: from the first health report after the deployment's previous
// placements to its next placements.
//
// Like BatchTracker it is a pure core fed with what the state wrote (the
// leader reads it from the event stream), reads no clock and keeps a few
// values per active deployment. A stage start that places nothing before
// the next one is replaced by it; after a gap in what it is fed (Gap) it
// measures only what it saw whole. It is not safe for concurrent use.
type StageTracker struct {
	deps map[string]*stageDep
}

type stageDep struct {
	// row is the deployment as last written.
	row *structs.Deployment
	// lastHealth is the stamp of the latest report of a healthy verdict;
	// firstHealth that of the first since the last placements (zero when
	// none came since).
	lastHealth, firstHealth time.Time
	// start is the origin of a stage start not yet placed (zero: none).
	start time.Time
	// placedIndex is the entry of the latest placements.
	placedIndex uint64
}

// StageFigures is what one observation measured.
type StageFigures struct {
	// StageStarts are the times from a stage's completion to the
	// placements of the next; BatchStarts those from a health report to
	// the next placements within a stage.
	StageStarts, BatchStarts []time.Duration
}

// NewStageTracker returns an empty tracker.
func NewStageTracker() *StageTracker {
	return &StageTracker{deps: map[string]*stageDep{}}
}

// Gap tells the tracker that it missed writes (its subscription fell
// behind): it forgets when reports came and which stage starts wait, so
// that nothing is measured from a time it may not have seen last, and
// keeps the rows, so that the stages that start after the gap are
// recognised.
func (t *StageTracker) Gap() {
	for _, sd := range t.deps {
		sd.lastHealth, sd.firstHealth, sd.start = time.Time{}, time.Time{}, time.Time{}
	}
}

// Tracked is the number of deployments tracked.
func (t *StageTracker) Tracked() int { return len(t.deps) }

func (t *StageTracker) dep(id string) *stageDep {
	sd := t.deps[id]
	if sd == nil {
		sd = &stageDep{}
		t.deps[id] = sd
	}
	return sd
}

// ObserveAlloc takes an allocation as the entry at index wrote it, and
// adds to f what it measured.
func (t *StageTracker) ObserveAlloc(index uint64, a *structs.Allocation, f *StageFigures) {
	if a == nil || a.DeploymentID == "" {
		return
	}
	sd, known := t.deps[a.DeploymentID]
	if !known {
		return // a deployment not seen written: nothing to measure from
	}
	if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil && *ds.Healthy && ds.ModifyIndex == index {
		at := time.Unix(0, a.ModifyTime)
		if at.After(sd.lastHealth) {
			sd.lastHealth = at
		}
		if sd.firstHealth.IsZero() {
			sd.firstHealth = at
		}
		return
	}
	if a.CreateIndex != index || index == sd.placedIndex {
		return // not a placement, or not the entry's first
	}
	sd.placedIndex = index
	at := time.Unix(0, a.CreateTime)
	switch {
	case !sd.start.IsZero():
		f.StageStarts = append(f.StageStarts, nonNegative(at.Sub(sd.start)))
		sd.start = time.Time{}
	case !sd.firstHealth.IsZero():
		f.BatchStarts = append(f.BatchStarts, nonNegative(at.Sub(sd.firstHealth)))
	}
	sd.firstHealth = time.Time{}
}

// ObserveDeployment takes a deployment as written: a stage that starts
// (against the row written before) is timed from then; a deployment that
// is over is forgotten.
func (t *StageTracker) ObserveDeployment(d *structs.Deployment) {
	if d == nil {
		return
	}
	if !d.Active() {
		delete(t.deps, d.ID)
		return
	}
	sd := t.dep(d.ID)
	prev := sd.row
	sd.row = d
	if prev == nil {
		return
	}
	switch {
	case prev.Status == structs.DeploymentStatusPaused && d.Status == structs.DeploymentStatusRunning:
		start := time.Unix(0, d.ModifyTime)
		if !prev.ResumeAt.IsZero() && prev.ResumeAt.Before(start) {
			start = prev.ResumeAt // a checkpoint delay's end
		}
		sd.start = start
	case stageStarts(prev, d) && !sd.lastHealth.IsZero():
		sd.start = sd.lastHealth
	}
}

// stageStarts reports whether a zone or an ordered group of d turned
// "rolling" from "waiting" since prev.
func stageStarts(prev, d *structs.Deployment) bool {
	for name, s := range d.TaskGroups {
		p := prev.TaskGroups[name]
		if s == nil || p == nil {
			continue
		}
		if p.Order > 0 && p.State == structs.GroupStateWaiting && s.State == structs.GroupStateRolling {
			return true
		}
		for _, z := range s.Zones {
			if z == nil || z.State != structs.ZoneStateRolling {
				continue
			}
			if pz := p.Zone(z.Name); pz != nil && pz.State == structs.ZoneStateWaiting {
				return true
			}
		}
	}
	return false
}
