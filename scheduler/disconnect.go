package scheduler

import (
	"time"

	"github.com/droverhq/drover/structs"
)

// Disconnected clients (the disconnect block), as Nomad's.
//
// When a node misses its heartbeats, the state store marks the
// allocations whose group has lost_after (or replace = false) "unknown"
// (and records when, in AllocStates). The reconciler then, for an unknown
// allocation:
//   - with replace = false: keeps its index held for it, whatever the
//     time, until its node comes back or it is stopped;
//   - past its lost_after (counted from that time), or on a node that is
//     down or gone: stops it as lost, and replaces it unless a
//     replacement was already placed while it was unknown;
//   - within lost_after: sets it aside (it holds no index and takes no
//     update) and places a replacement at its index; a follow-up
//     evaluation comes at the end of lost_after.
//
// An allocation whose client reports it again (no longer unknown) while a
// replacement placed during its unknown time still runs has reconnected:
// one of the two is kept, per reconcile, and the other stopped.
//
// A lost allocation of a group with stop_on_client_after is replaced only
// once that time has passed since it was lost: its client stops it then,
// so that the two never run at once.

// disconnectScoreSuffix names, in AllocationMetric.Scores, the placement
// score of the node an allocation was placed on (its key is the node ID
// then this suffix); best_score compares it.
const disconnectScoreSuffix = structs.NormalizedScoreSuffix

// disconnectPass handles the group's unknown and reconnected allocations
// before the others are classified, and returns those it dealt with: the
// classification skips them.
func (r *reconciler) disconnectPass(g *groupPass, allocs []*structs.Allocation) map[*structs.Allocation]bool {
	var skip map[*structs.Allocation]bool
	mark := func(a *structs.Allocation) {
		if skip == nil {
			skip = map[*structs.Allocation]bool{}
		}
		skip[a] = true
	}
	// Only allocations that were ever unknown are dealt with here; most
	// passes have none, and then the group's allocations are walked once.
	type unknownAlloc struct {
		a         *structs.Allocation
		intervals [][2]time.Time
	}
	var unknown []unknownAlloc
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun || len(a.AllocStates) == 0 {
			continue
		}
		if iv := a.UnknownIntervals(); len(iv) > 0 {
			unknown = append(unknown, unknownAlloc{a, iv})
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	// byPrev finds the allocations placed as replacements of another.
	byPrev := map[string][]*structs.Allocation{}
	for _, a := range allocs {
		if a.PreviousAllocation != "" {
			byPrev[a.PreviousAllocation] = append(byPrev[a.PreviousAllocation], a)
		}
	}
	tg := g.tg
	for _, u := range unknown {
		a, intervals := u.a, u.intervals
		if skip[a] {
			continue
		}
		repl := disconnectReplacement(a, intervals, byPrev[a.ID])
		idx := a.Index()
		switch {
		case a.ClientStatus == structs.AllocClientStatusUnknown:
			mark(a)
			if idx < 0 {
				r.stop(a, structs.AllocNotNeeded, "")
				continue
			}
			if tg.StaysUnknown() {
				// Never replaced for its node's absence: its index waits
				// for it until the node is back or it is stopped.
				if repl == nil {
					g.holders = append(g.holders, &holder{index: idx, alloc: a})
				}
				continue
			}
			since := intervals[len(intervals)-1][0]
			expiry := since.Add(tg.LostAfterOf())
			if r.nodeLost(a) || !r.in.Now.Before(expiry) {
				r.stop(a, structs.AllocLost, structs.AllocClientStatusLost)
				if repl == nil {
					g.holders = append(g.holders, &holder{index: idx, alloc: a,
						place: &Placement{Index: idx, PreviousAlloc: a.ID, PreviousNode: a.NodeID}})
				}
				continue
			}
			if a.FollowupEvalID == "" {
				g.followups = append(g.followups, pendingFollowup{alloc: a, at: expiry, trigger: structs.EvalTriggerMaxDisconnectTimeout})
			}
			if repl == nil {
				g.holders = append(g.holders, &holder{index: idx, alloc: a,
					place: &Placement{Index: idx, PreviousAlloc: a.ID, PreviousNode: a.NodeID}})
			}
		case repl != nil && !repl.TerminalStatus():
			// Reconnected while its replacement runs: keep one.
			drop := repl
			if a.ClientTerminalStatus() || pickReplacement(tg, a, repl) {
				drop = a
			}
			mark(drop)
			r.stop(drop, structs.AllocReconnected, "")
		case repl != nil && a.ClientTerminalStatus():
			// Finished while disconnected; its replacement (or the
			// replacement's own) took over the index.
			mark(a)
		}
	}
	return skip
}

// disconnectReplacement returns the allocation placed to replace a while
// a was unknown (created within one of its unknown intervals), if any;
// a live one first.
func disconnectReplacement(a *structs.Allocation, intervals [][2]time.Time, cands []*structs.Allocation) *structs.Allocation {
	var found *structs.Allocation
	for _, c := range cands {
		if c == a || c.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		created := time.Unix(0, c.CreateTime)
		in := false
		for _, iv := range intervals {
			if !created.Before(iv[0]) && (iv[1].IsZero() || created.Before(iv[1])) {
				in = true
				break
			}
		}
		if !in {
			continue
		}
		if found == nil || found.TerminalStatus() && !c.TerminalStatus() {
			found = c
		}
	}
	return found
}

// pickReplacement reports whether, of an allocation that reconnected
// (orig) and the replacement placed while it was unknown (repl), the
// replacement is kept, as Nomad picks: a replacement of a newer job
// version always; else per the group's reconcile option.
func pickReplacement(tg *structs.TaskGroup, orig, repl *structs.Allocation) bool {
	if repl.Job != nil && orig.Job != nil &&
		(repl.Job.Version > orig.Job.Version || repl.Job.CreateIndex > orig.Job.CreateIndex) {
		return true
	}
	mode := structs.ReconcileBestScore
	if tg.Disconnect != nil && tg.Disconnect.Reconcile != "" {
		mode = tg.Disconnect.Reconcile
	}
	switch mode {
	case structs.ReconcileKeepOriginal:
		return false
	case structs.ReconcileKeepReplacement:
		return true
	case structs.ReconcileLongestRunning:
		o, r := runningSince(tg, orig), runningSince(tg, repl)
		switch {
		case o.IsZero():
			return !r.IsZero()
		case r.IsZero():
			return false
		}
		return r.Before(o)
	}
	// best_score: the replacement when its node scored better, or when
	// only it has a score.
	o, oks := placementScore(orig)
	s, rks := placementScore(repl)
	return rks && (!oks || s > o)
}

// runningSince is when the allocation's leader task started, or its
// earliest started task when it has no leader: how long it has run
// without a break.
func runningSince(tg *structs.TaskGroup, a *structs.Allocation) time.Time {
	var since time.Time
	for name, st := range a.TaskStates {
		if st == nil || st.StartedAt.IsZero() {
			continue
		}
		if t := tg.LookupTask(name); t != nil && t.Leader {
			return st.StartedAt
		}
		if since.IsZero() || st.StartedAt.Before(since) {
			since = st.StartedAt
		}
	}
	return since
}

// placementScore is the score of the node the allocation was placed on,
// as its placement recorded it.
func placementScore(a *structs.Allocation) (float64, bool) {
	return a.Metrics.PlacementScore(a.NodeID)
}

// lostWaitsForClientStop reports whether a lost allocation of a group
// with stop_on_client_after must wait before it is replaced, and until
// when: its client stops it that long after it was lost.
func (r *reconciler) lostWaitsForClientStop(tg *structs.TaskGroup, a *structs.Allocation) (time.Time, bool) {
	d, ok := tg.StopOnClientAfterOf()
	if !ok {
		return time.Time{}, false
	}
	lostAt, ok := a.LastClientStatusAt(structs.AllocClientStatusLost)
	if !ok {
		lostAt = time.Unix(0, a.ModifyTime)
	}
	until := lostAt.Add(d)
	return until, r.in.Now.Before(until)
}
