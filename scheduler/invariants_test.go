package scheduler

import (
	"fmt"

	"github.com/droverhq/drover/structs"
)

// checkPlan asserts what must hold of every plan, whatever the input:
//   - no alloc is stopped or replaced twice, and only live allocs are;
//   - per group, live allocs after the plan never exceed count plus
//     canaries (system jobs: one per node);
//   - no two live allocs share an index, except a canary beside the alloc
//     it will replace;
//   - destructive replacements never exceed max_parallel in a rolling group;
//   - with max_surge, an old alloc may run beside its surge replacement, and
//     live allocs stay within count + canaries + surge;
//   - an alloc marked for migration may run beside its replacement (one
//     per index), and marked allocs are never replaced twice.
func checkPlan(in Input, p *Plan) error {
	byID := map[string]*structs.Allocation{}
	for _, a := range in.Allocs {
		byID[a.ID] = a
	}
	gone := map[string]bool{}
	mark := func(id, why string) error {
		if gone[id] {
			return fmt.Errorf("alloc %s stopped twice (%s)", id, why)
		}
		gone[id] = true
		a := byID[id]
		if a == nil {
			return fmt.Errorf("%s names unknown alloc %s", why, id)
		}
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			return fmt.Errorf("%s of already stopped alloc %s", why, id)
		}
		return nil
	}
	for _, s := range p.Stop {
		if err := mark(s.Alloc.ID, "stop"); err != nil {
			return err
		}
	}
	destructive := map[string]int{}
	for _, pl := range p.Place {
		if pl.Replaces != "" {
			if err := mark(pl.Replaces, "replace"); err != nil {
				return err
			}
		}
		if pl.ReplaceDescription == structs.AllocUpdating {
			destructive[pl.TaskGroup]++
		}
	}
	if in.Job.Stopped() {
		for _, a := range in.Allocs {
			if !a.TerminalStatus() && !gone[a.ID] {
				return fmt.Errorf("stopped job leaves alloc %s running", a.ID)
			}
		}
		if len(p.Place) > 0 {
			return fmt.Errorf("stopped job places allocs")
		}
		return nil
	}
	type slot struct{ live, canary, old, moving int }
	for _, tg := range in.Job.TaskGroups {
		slots := map[int]*slot{}
		nodes := map[string]int{}
		total, canaries, moving := 0, 0, 0
		surge := 0
		if tg.Update != nil && !structs.PerNode(in.Job.Type) {
			surge = tg.Update.SurgeFor(tg.Count)
		}
		add := func(idx int, canary, old, marked bool, node string) {
			s := slots[idx]
			if s == nil {
				s = &slot{}
				slots[idx] = s
			}
			switch {
			case marked:
				s.moving++
				moving++
			case canary:
				s.canary++
				canaries++
			case old && surge > 0:
				s.old++
			default:
				s.live++
			}
			total++
			nodes[node]++
		}
		for _, a := range in.Allocs {
			if a.TaskGroup != tg.Name || gone[a.ID] || a.TerminalStatus() {
				continue
			}
			add(a.Index(), a.IsCanary() && a.DeploymentID != "" && in.Deployment != nil &&
				a.DeploymentID == in.Deployment.ID && !in.Deployment.TaskGroups[tg.Name].Promoted,
				a.Job != nil && UpdateKindFor(a.Job, in.Job, tg.Name) == UpdateDestructive || restartOld(in, a),
				a.DesiredTransition.ShouldMigrate() && !structs.PerNode(in.Job.Type), a.NodeID)
		}
		for _, pl := range p.Place {
			if pl.TaskGroup == tg.Name {
				add(pl.Index, pl.Canary, false, false, pl.NodeID)
			}
		}
		if structs.PerNode(in.Job.Type) {
			if err := sysbatchOnce(in, p, tg.Name); err != nil {
				return err
			}
			for n, c := range nodes {
				if c > 1 {
					return fmt.Errorf("group %s: %d allocs on node %s", tg.Name, c, n)
				}
			}
			continue
		}
		want := tg.Count + moving
		if tg.Update != nil {
			want += tg.Update.Canary + surge
		}
		if total > want {
			return fmt.Errorf("group %s: %d live allocs, count %d", tg.Name, total, want)
		}
		for idx, s := range slots {
			if s.live+s.old > 1 && (s.live > 1 || surge == 0) || s.old > 1 || s.canary > 1 || s.moving > 1 {
				return fmt.Errorf("group %s: index %d held %d times (+%d old beside, +%d canaries)", tg.Name, idx, s.live, s.old, s.canary)
			}
		}
		concurrent := tg.Update != nil && tg.Update.Zones != nil && !tg.Update.Zones.ByZone()
		if tg.Update.Rolling() && !tg.Update.UnhealthyFirst && !concurrent && destructive[tg.Name] > tg.Update.ParallelFor(tg.Count) {
			return fmt.Errorf("group %s: %d destructive updates, max_parallel %d", tg.Name, destructive[tg.Name], tg.Update.ParallelFor(tg.Count))
		}
	}
	return nil
}

// sysbatchOnce: a sysbatch group never runs again on a node where one of
// its allocs finished on its own (complete or failed, not stopped by the
// servers), unless the job changed the group destructively since.
func sysbatchOnce(in Input, p *Plan, group string) error {
	if in.Job.Type != structs.JobTypeSysBatch {
		return nil
	}
	done := map[string]bool{}
	for _, a := range in.Allocs {
		if a.TaskGroup == group && a.DesiredStatus == structs.AllocDesiredStatusRun &&
			(a.ClientStatus == structs.AllocClientStatusComplete || a.ClientStatus == structs.AllocClientStatusFailed) &&
			a.Job != nil && UpdateKindFor(a.Job, in.Job, group) != UpdateDestructive {
			done[a.NodeID] = true
		}
	}
	for _, pl := range p.Place {
		if pl.TaskGroup == group && done[pl.NodeID] {
			return fmt.Errorf("sysbatch group %s placed again on node %s, where it finished", group, pl.NodeID)
		}
	}
	return nil
}

// restartOld reports an alloc a job restart with -reschedule has yet to
// replace: it may run beside its surge replacement as an old version's.
func restartOld(in Input, a *structs.Allocation) bool {
	d := in.Deployment
	return d != nil && d.Restart != nil && d.Restart.Reschedule && d.Restart.Restarts(a.TaskGroup) &&
		a.DeploymentID != d.ID && a.CreateIndex < d.CreateIndex
}
