package scheduler

import (
	"slices"
	"time"

	"github.com/droverhq/drover/structs"
)

// PlanRollout returns the batches the rollout of in.Job will run if
// nothing fails: the reconciler itself, run forward pass after pass on a
// copy of the input in which every new alloc turns healthy at once, the
// deployment watcher's moves (promotion of healthy canaries, checkpoints
// passed, zones moved on) played as they would be. It is the same code as
// the live rollout, not a second model of it, and as pure as Reconcile.
//
// A pass's replacements of a group form one batch per zone (no batch
// mixes zones); a group's first version is one batch of all its allocs.
// A rollout longer than MaxPlanPasses passes is cut there: the plan then
// shows its first batches.
func PlanRollout(in Input) []structs.RolloutBatch {
	if in.Job == nil || in.Job.Stopped() {
		return nil
	}
	sim := newPlanSim(in)
	var out []structs.RolloutBatch
	batches := map[string]int{}
	last := map[string]int{} // group → index in out of its last batch
	limit := min(sim.limit(), MaxPlanPasses)
	for pass := 0; pass < limit; pass++ {
		p := Reconcile(sim.input())
		got := sim.batches(p)
		for _, b := range got {
			batches[b.Group]++
			b.Batch = batches[b.Group]
			out = append(out, b)
			last[b.Group] = len(out) - 1
		}
		sim.apply(p)
		progressed := len(p.Place) > 0 || len(p.Stop) > 0 || len(p.InPlace) > 0
		sim.now = sim.now.Add(time.Second)
		moved := sim.settle(out, last)
		if !progressed && !moved {
			break
		}
	}
	for _, i := range last {
		out[i].PauseAfter = ""
	}
	return out
}

// gatingAnalyses names the group's analyses of the given When, in the
// update block's order; none for a revert's version (website/rollouts.md#analysis-metrics-decide).
func (s *planSim) gatingAnalyses(group, when string) []string {
	if s.job.RevertOf != nil {
		return nil
	}
	tg := s.job.LookupTaskGroup(group)
	if tg == nil || tg.Update == nil {
		return nil
	}
	var out []string
	for _, a := range tg.Update.Analyses {
		if a != nil && a.When == when {
			out = append(out, a.Name)
		}
	}
	return out
}

// MaxPlanPasses bounds the passes PlanRollout runs (each costs what a
// scheduling pass of the job costs).
const MaxPlanPasses = 1000

// planSim is the world PlanRollout runs the reconciler on.
type planSim struct {
	in     Input
	job    *structs.Job
	allocs []*structs.Allocation
	dep    *structs.Deployment
	nodes  map[string]*structs.Node
	sorted []*structs.Node
	now    time.Time
	n      int
}

func newPlanSim(in Input) *planSim {
	s := &planSim{in: in, job: in.Job, now: in.Now, nodes: map[string]*structs.Node{}}
	for _, a := range in.Allocs {
		if a != nil {
			s.allocs = append(s.allocs, a.Copy())
		}
	}
	s.dep = in.Deployment.Copy()
	for _, n := range in.Nodes {
		if n != nil {
			s.nodes[n.ID] = n
			s.sorted = append(s.sorted, n)
		}
	}
	slices.SortFunc(s.sorted, func(a, b *structs.Node) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return s
}

// limit bounds the passes: every alloc replaced one at a time, with room.
func (s *planSim) limit() int {
	n := 0
	for _, tg := range s.job.TaskGroups {
		if tg != nil {
			n += tg.Count
			if tg.Update != nil { // a batch job's groups have none
				n += tg.Update.Canary
			}
		}
	}
	return 4*(n+len(s.allocs)) + 16
}

func (s *planSim) input() Input {
	in := s.in
	in.Allocs, in.Deployment, in.Now = s.allocs, s.dep, s.now
	in.IDs = func() string {
		s.n++
		return "planned-" + itoa(s.n)
	}
	return in
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// batches turns a pass's placements into batches: per group, its
// replacements of older allocs by zone, in the group's zone order, or its
// first version's placements.
func (s *planSim) batches(p *Plan) []structs.RolloutBatch {
	prev := make(map[string]*structs.Allocation, len(s.allocs))
	for _, a := range s.allocs {
		prev[a.ID] = a
	}
	type key struct{ group, zone string }
	var keys []key
	byKey := map[key]*structs.RolloutBatch{}
	gates := map[key]map[string]bool{} // the When of the analyses that gate after the batch
	for _, pl := range p.Place {
		old := prev[pl.PreviousAlloc]
		replaces := old != nil && !pl.Reschedule && (old.Job == nil || old.Job.Version != s.job.Version || old.Job.CreateIndex != s.job.CreateIndex ||
			s.restarting(old))
		first := pl.PreviousAlloc == "" && !pl.Canary && !s.hadVersion(pl.TaskGroup)
		if !replaces && !first && !pl.Canary {
			continue
		}
		k := key{pl.TaskGroup, pl.Zone}
		b := byKey[k]
		if b == nil {
			b = &structs.RolloutBatch{Group: pl.TaskGroup, Zone: pl.Zone}
			byKey[k] = b
			keys = append(keys, k)
		}
		b.Allocs = append(b.Allocs, pl.Name)
		b.Surge = b.Surge || pl.Surge
		if gates[k] == nil {
			gates[k] = map[string]bool{}
		}
		switch {
		case pl.Canary:
			gates[k][structs.AnalysisWhenCanary] = true
		case replaces:
			gates[k][structs.AnalysisWhenEachBatch] = true
		}
	}
	for _, c := range p.InPlace {
		// A job restart in place: its batch restarts these allocs.
		if c.DesiredRestart == nil {
			continue
		}
		zone := c.Zone
		if tg := s.view().LookupTaskGroup(c.TaskGroup); zone == "" && tg != nil && tg.Update != nil && tg.Update.Zones != nil {
			zone = structs.ZoneOf(s.nodes[c.NodeID], tg.Update.Zones.Attribute)
		}
		k := key{c.TaskGroup, zone}
		b := byKey[k]
		if b == nil {
			b = &structs.RolloutBatch{Group: c.TaskGroup, Zone: zone}
			byKey[k] = b
			keys = append(keys, k)
		}
		b.Allocs = append(b.Allocs, c.Name)
	}
	// In the zones' rollout order within a group, groups in job order.
	order := s.job.GroupRolloutOrder()
	rank := func(k key) (int, int) {
		gi, zi := 0, 0
		for i, tg := range s.job.TaskGroups {
			if tg != nil && tg.Name == k.group {
				gi = i
			}
		}
		if order != nil {
			gi = slices.Index(order, k.group)
		}
		if s.dep != nil {
			if st := s.dep.TaskGroups[k.group]; st != nil {
				for i, z := range st.Zones {
					if z.Name == k.zone {
						zi = i
					}
				}
			}
		}
		return gi, zi
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		ga, za := rank(a)
		gb, zb := rank(b)
		if ga != gb {
			return ga - gb
		}
		return za - zb
	})
	out := make([]structs.RolloutBatch, 0, len(keys))
	for _, k := range keys {
		b := byKey[k]
		slices.Sort(b.Allocs)
		for _, when := range []string{structs.AnalysisWhenCanary, structs.AnalysisWhenEachBatch} {
			if gates[k][when] {
				b.Analysis = append(b.Analysis, s.gatingAnalyses(k.group, when)...)
			}
		}
		out = append(out, *b)
	}
	return out
}

// restarting reports whether a is an alloc a job restart has yet to reach
// (a pass replacing it replaces it for the restart).
func (s *planSim) restarting(a *structs.Allocation) bool {
	d := s.in.Deployment
	return d != nil && d.Restart != nil && d.Restart.Restarts(a.TaskGroup) && a.DeploymentID != d.ID
}

// view is the job as the rollout runs it: a job restart's batch size and
// wait in place of the update block's.
func (s *planSim) view() *structs.Job {
	if d := s.in.Deployment; d != nil && d.Restart != nil {
		return d.Restart.ApplyTo(s.job)
	}
	return s.job
}

// hadVersion reports whether some alloc of the group ran an older version
// of the job: if none did, the group's placements are its first version.
func (s *planSim) hadVersion(group string) bool {
	for _, a := range s.in.Allocs {
		if a != nil && a.TaskGroup == group && a.Job != nil && a.Job.Version != s.job.Version {
			return true
		}
	}
	return false
}

// apply commits a pass as the plan applier would, every placement finding
// a node: the previous alloc's, for a zone the first node of it, else the
// first ready node.
func (s *planSim) apply(p *Plan) {
	byID := make(map[string]*structs.Allocation, len(s.allocs))
	for _, a := range s.allocs {
		byID[a.ID] = a
	}
	stop := func(id string) {
		if a := byID[id]; a != nil {
			a.DesiredStatus = structs.AllocDesiredStatusStop
			if !a.ClientTerminalStatus() {
				a.ClientStatus = structs.AllocClientStatusComplete
			}
		}
	}
	if p.Deployment != nil {
		s.dep = p.Deployment.Copy()
	}
	for _, u := range p.DeploymentUpdates {
		if s.dep != nil && u.DeploymentID == s.dep.ID {
			s.dep = s.dep.Copy()
			for g, v := range u.AllPlaced {
				if gs := s.dep.TaskGroups[g]; gs != nil {
					gs.AllPlaced = v
				}
			}
			if u.Status != "" {
				s.dep.Status = u.Status
			}
		}
	}
	for _, st := range p.Stop {
		stop(st.Alloc.ID)
	}
	for _, pl := range p.Place {
		if pl.Replaces != "" {
			stop(pl.Replaces)
		}
		a := &structs.Allocation{
			ID: pl.AllocID, Namespace: s.job.Namespace, Name: pl.Name, JobID: s.job.ID, Job: s.job,
			TaskGroup: pl.TaskGroup, DeploymentID: pl.DeploymentID, PreviousAllocation: pl.PreviousAlloc,
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
			NodeID: pl.NodeID, Zone: pl.Zone, RescheduleTracker: pl.RescheduleTracker,
		}
		if prev := byID[pl.PreviousAlloc]; prev != nil && a.NodeID == "" {
			a.NodeID, a.NodeName = prev.NodeID, prev.NodeName
		}
		if pl.InZone {
			if tg := s.job.LookupTaskGroup(pl.TaskGroup); tg != nil && tg.Update != nil && tg.Update.Zones != nil {
				for _, n := range s.sorted {
					if n.Ready() && structs.ZoneOf(n, tg.Update.Zones.Attribute) == pl.Zone {
						a.NodeID, a.NodeName = n.ID, n.Name
						break
					}
				}
			}
		}
		if a.NodeID == "" {
			// A new alloc (a canary, a first version's) on any ready node:
			// the plan shows batches, not placements.
			for _, n := range s.sorted {
				if n.Ready() {
					a.NodeID, a.NodeName = n.ID, n.Name
					break
				}
			}
		}
		if pl.Canary {
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
		}
		s.allocs = append(s.allocs, a)
	}
	for _, c := range p.InPlace {
		if a := byID[c.ID]; a != nil {
			*a = *c
		}
	}
	// Stopped allocs play no further part: drop them, so that a pass
	// costs what the group's live allocs cost.
	kept := s.allocs[:0]
	for _, a := range s.allocs {
		if a.DesiredStatus == structs.AllocDesiredStatusRun {
			kept = append(kept, a)
		}
	}
	s.allocs = kept
}

// settle turns every new alloc healthy and plays the deployment watcher:
// canaries promoted once healthy, checkpoints passed (the group's last
// batch then pauses at a checkpoint), zones moved on (the last batch of a
// zone another zone follows pauses for it). It reports whether it moved
// anything.
func (s *planSim) settle(out []structs.RolloutBatch, last map[string]int) bool {
	moved := false
	yes := true
	healthy := map[string]int{}
	zoneHealthy := map[string]map[string]int{}
	for _, a := range s.allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientTerminalStatus() || s.dep == nil || a.DeploymentID != s.dep.ID {
			continue
		}
		if !a.IsHealthy() {
			ds := &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: s.now}
			if a.DeploymentStatus != nil {
				ds.Canary = a.DeploymentStatus.Canary
			}
			a.DeploymentStatus = ds
			moved = true
		}
		healthy[a.TaskGroup]++
		if zoneHealthy[a.TaskGroup] == nil {
			zoneHealthy[a.TaskGroup] = map[string]int{}
		}
		zoneHealthy[a.TaskGroup][a.Zone]++
	}
	if s.dep == nil {
		return moved
	}
	mark := func(group, why string) {
		if i, ok := last[group]; ok && out[i].PauseAfter == "" {
			out[i].PauseAfter = why
		}
	}
	for _, tg := range s.view().TaskGroups {
		if tg == nil || tg.Update == nil {
			continue
		}
		st := s.dep.TaskGroups[tg.Name]
		if st == nil {
			continue
		}
		if st.DesiredCanaries > 0 && !st.Promoted && healthy[tg.Name] >= st.DesiredCanaries {
			st.Promoted = true
			moved = true
		}
		if cps := tg.Update.CheckpointsFor(st.DesiredTotal); s.job.RevertOf == nil && (st.DesiredCanaries == 0 || st.Promoted) {
			for st.CheckpointsReached < len(cps) && healthy[tg.Name] >= cps[st.CheckpointsReached] {
				if cps[st.CheckpointsReached] > st.DesiredCanaries {
					mark(tg.Name, structs.PauseAfterCheckpoint)
				}
				st.CheckpointsReached++
				moved = true
			}
		}
		if st.Order > 0 && st.State == structs.GroupStateRolling && healthy[tg.Name] >= st.DesiredTotal &&
			(st.DesiredCanaries == 0 || st.Promoted) {
			st.State = structs.GroupStateDone
			moved = true
		}
		z := tg.Update.Zones
		for i, zs := range st.Zones {
			h := zoneHealthy[tg.Name][zs.Name]
			if zs.State == structs.ZoneStateRolling && h >= zs.Size {
				zs.State = structs.ZoneStateDone
				moved = true
			}
			if zs.State != structs.ZoneStateWaiting && h >= z.ThresholdFor(zs.Size) && i+1 < len(st.Zones) &&
				st.Zones[i+1].State == structs.ZoneStateWaiting {
				mark(tg.Name, structs.PauseAfterZone)
				st.Zones[i+1].State = structs.ZoneStateRolling
				moved = true
			}
		}
	}
	// Groups one at a time: once every group before it is done, the next
	// waiting group takes its turn.
	if s.job.GroupsInOrder() {
		var states []*structs.DeploymentState
		for _, st := range s.dep.TaskGroups {
			if st != nil && st.Order > 0 {
				states = append(states, st)
			}
		}
		slices.SortFunc(states, func(a, b *structs.DeploymentState) int { return a.Order - b.Order })
		for _, st := range states {
			if st.State == structs.GroupStateWaiting {
				st.State = structs.GroupStateRolling
				moved = true
				break
			}
			if st.State != structs.GroupStateDone {
				break
			}
		}
	}
	return moved
}
