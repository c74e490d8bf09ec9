package server

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// migrating returns the job's allocs marked to migrate that still run.
func migrating(s *state.Snapshot, jobID string) []*structs.Allocation {
	var out []*structs.Allocation
	for _, a := range allocsOf(s, jobID) {
		if a.DesiredTransition.ShouldMigrate() {
			out = append(out, a)
		}
	}
	return out
}

// serving counts the job's live allocs reported healthy.
func serving(s *state.Snapshot, jobID string) int {
	n := 0
	for _, a := range allocsOf(s, jobID) {
		if a.IsHealthy() {
			n++
		}
	}
	return n
}

// onNode returns the job's live allocs on a node.
func onNode(s *state.Snapshot, jobID, nodeID string) []*structs.Allocation {
	var out []*structs.Allocation
	for _, a := range allocsOf(s, jobID) {
		if a.NodeID == nodeID {
			out = append(out, a)
		}
	}
	return out
}

// drainSetup registers nodes a and b, a service job "web" of count allocs
// spread over them and a system job "agent", all healthy; then node c,
// where the moved allocs go.
func drainSetup(t *testing.T, h *harness, count int) {
	t.Helper()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	_, err := h.leader.RegisterJob(h.ctx, testJob("web", count, 100))
	must(t, err)
	sys := testJob("agent", 1, 50)
	sys.Type = structs.JobTypeSystem
	sys.TaskGroups[0].ReschedulePolicy = nil
	_, err = h.leader.RegisterJob(h.ctx, sys)
	must(t, err)
	h.waitFor("the allocs placed", func(s *state.Snapshot) bool {
		return len(allocsOf(s, "web")) == count && len(allocsOf(s, "agent")) == 2
	})
	snap := h.store().Snapshot()
	h.markHealthy(append(allocsOf(snap, "web"), allocsOf(snap, "agent")...))
	h.waitFor("the first deployments successful", func(s *state.Snapshot) bool {
		d, e := deploymentOf(s, "web", 0), deploymentOf(s, "agent", 0)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful && e != nil && e.Status == structs.DeploymentStatusSuccessful
	})
	_, _, err = h.leader.RegisterNode(h.ctx, testNode("c", 8000, 8192))
	must(t, err)
	h.waitFor("the system alloc on c", func(s *state.Snapshot) bool { return len(allocsOf(s, "agent")) == 3 })
	h.markHealthy(onNode(h.store().Snapshot(), "agent", "node-c"))
	h.idle()
}

// moveOne waits for the next marked alloc and its replacement, checks
// that no more than one alloc of the group moves at once and that the
// group never serves fewer than count, and reports the replacement
// healthy; it returns the node the moved alloc left.
func moveOne(t *testing.T, h *harness, count int) string {
	t.Helper()
	var moved, repl *structs.Allocation
	h.waitFor("a marked alloc and its replacement", func(s *state.Snapshot) bool {
		m := migrating(s, "web")
		if len(m) != 1 {
			return false
		}
		moved = m[0]
		for _, a := range allocsOf(s, "web") {
			if a.PreviousAllocation == moved.ID {
				repl = a
				return true
			}
		}
		return false
	})
	h.idle()
	snap := h.store().Snapshot()
	if m := migrating(snap, "web"); len(m) != 1 {
		t.Fatalf("%d allocs of web moving at once, migrate.max_parallel 1\n%s", len(m), h.dump())
	}
	if got := serving(snap, "web"); got < count {
		t.Fatalf("web serves %d of %d while %s moves\n%s", got, count, moved.Name, h.dump())
	}
	if repl.NodeID != "node-c" {
		t.Fatalf("replacement of %s placed on %s, not the node that is not draining", moved.Name, repl.NodeID)
	}
	if a, _ := snap.AllocByID(moved.ID); a.DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatalf("%s stopped before its replacement is healthy", moved.Name)
	}
	h.markHealthy([]*structs.Allocation{repl})
	h.waitFor("the moved alloc stopped", func(s *state.Snapshot) bool {
		a, _ := s.AllocByID(moved.ID)
		return a.DesiredStatus == structs.AllocDesiredStatusStop && a.DesiredDescription == structs.AllocMigrating
	})
	return moved.NodeID
}

// Draining two nodes at once moves the group's allocs one at a time across
// both (migrate.max_parallel 1, its default), each old alloc serving until
// its replacement is healthy; each node's system alloc stops only once its
// service allocs are gone; both drains complete, the nodes stay
// ineligible and their events say so.
func TestDrainMovesOneAtATimeAcrossNodes(t *testing.T) {
	h := newHarness(t)
	h.start()
	drainSetup(t, h, 4)
	for _, n := range []string{"node-a", "node-b"} {
		res, err := h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: n, Spec: &structs.DrainSpec{Deadline: time.Hour},
			Meta: map[string]string{"message": "kernel upgrade"}})
		must(t, err)
		if res.NodeModifyIndex == 0 {
			t.Fatalf("drain of %s: %+v", n, res)
		}
	}
	left := map[string]int{}
	for range 4 {
		node := moveOne(t, h, 4)
		left[node]++
		snap := h.store().Snapshot()
		for _, n := range []string{"node-a", "node-b"} {
			if len(onNode(snap, "web", n)) > 0 && len(onNode(snap, "agent", n)) != 1 {
				t.Fatalf("the system alloc on %s stopped while web allocs are left there\n%s", n, h.dump())
			}
		}
	}
	if left["node-a"] != 2 || left["node-b"] != 2 {
		t.Fatalf("moved from %v, want 2 from each node", left)
	}
	h.waitFor("both drains complete", func(s *state.Snapshot) bool {
		for _, id := range []string{"node-a", "node-b"} {
			if n, _ := s.NodeByID(id); n.DrainStrategy != nil {
				return false
			}
		}
		return true
	})
	snap := h.store().Snapshot()
	for _, id := range []string{"node-a", "node-b"} {
		n, _ := snap.NodeByID(id)
		if n.SchedulingEligibility != structs.NodeSchedulingIneligible || n.Drain {
			t.Errorf("%s after its drain: eligibility %s, drain %t", id, n.SchedulingEligibility, n.Drain)
		}
		if n.LastDrain == nil || n.LastDrain.Status != structs.DrainStatusComplete || n.LastDrain.Meta["message"] != "kernel upgrade" {
			t.Errorf("%s LastDrain: %+v", id, n.LastDrain)
		}
		var msgs []string
		for _, e := range n.Events {
			msgs = append(msgs, e.Message)
		}
		if want := fmt.Sprint([]string{structs.NodeRegisterEventRegistered, structs.NodeDrainEventDrainSet, structs.NodeDrainEventComplete}); fmt.Sprint(msgs) != want {
			t.Errorf("%s events %v, want %v", id, msgs, want)
		}
		if len(onNode(snap, "web", id))+len(onNode(snap, "agent", id)) != 0 {
			t.Errorf("allocs left on %s\n%s", id, h.dump())
		}
	}
	if got := len(onNode(snap, "web", "node-c")); got != 4 {
		t.Fatalf("%d web allocs on node c, want 4", got)
	}
}

// At the deadline whatever is left stops at once, without waiting for
// replacements' health; the drain completes with deadline_reached.
func TestDrainDeadlineStopsWhatIsLeft(t *testing.T) {
	h := newHarness(t)
	h.start()
	drainSetup(t, h, 4)
	// A deadline within the nodes' heartbeat TTL: the fake clock moves
	// past it, and nobody heartbeats.
	_, err := h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: "node-a", Spec: &structs.DrainSpec{Deadline: 5 * time.Second}})
	must(t, err)
	h.waitFor("one alloc marked", func(s *state.Snapshot) bool { return len(migrating(s, "web")) == 1 })
	h.idle()
	if got := h.clock.pending(); len(got) == 0 {
		t.Fatal("no timer armed for the drain deadline")
	}
	if left := len(onNode(h.store().Snapshot(), "web", "node-a")); left != 2 {
		t.Fatalf("%d web allocs on node-a before the deadline, want 2 (one moving, serving)\n%s", left, h.dump())
	}
	// Nobody reports the replacement healthy; the deadline comes.
	h.clock.Advance(5 * time.Second)
	h.waitFor("the drain complete", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID("node-a")
		return n.DrainStrategy == nil
	})
	snap := h.store().Snapshot()
	if left := len(onNode(snap, "web", "node-a")) + len(onNode(snap, "agent", "node-a")); left != 0 {
		t.Fatalf("%d allocs left on node-a after the deadline\n%s", left, h.dump())
	}
	if len(allocsOf(snap, "web")) != 4 {
		t.Fatalf("web has %d live allocs after the deadline, want 4 (replaced)\n%s", len(allocsOf(snap, "web")), h.dump())
	}
	all, _ := snap.AllocsByNode("node-a")
	for _, a := range all {
		if a.DesiredDescription != structs.AllocMigrating || a.ClientStatus == structs.AllocClientStatusLost {
			t.Errorf("%s %s on node-a: %q, client %s; want stopped as migrated", a.JobID, a.Name, a.DesiredDescription, a.ClientStatus)
		}
	}
	n, _ := snap.NodeByID("node-a")
	last := n.Events[len(n.Events)-1]
	if last.Message != structs.NodeDrainEventComplete || last.Details[structs.NodeDrainEventDetailDeadlined] != "true" {
		t.Fatalf("last event %+v", last)
	}
}

// -ignore-system leaves the system alloc running; a forced drain stops the
// rest at once.
func TestDrainForcedIgnoringSystemJobs(t *testing.T) {
	h := newHarness(t)
	h.start()
	drainSetup(t, h, 4)
	_, err := h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: "node-b", Spec: &structs.DrainSpec{Deadline: -1, IgnoreSystemJobs: true}})
	must(t, err)
	h.waitFor("the drain complete", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID("node-b")
		return n.DrainStrategy == nil
	})
	snap := h.store().Snapshot()
	if len(onNode(snap, "web", "node-b")) != 0 || len(onNode(snap, "agent", "node-b")) != 1 {
		t.Fatalf("after a forced drain ignoring system jobs:\n%s", h.dump())
	}
}

// The operator's verbs: bad input is refused and changes nothing; a
// cancelled drain with -mark-eligible makes the node eligible and the
// system jobs place on it again.
func TestDrainAndEligibilityVerbs(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096))
	must(t, err)
	if _, err := h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: "nope", Spec: &structs.DrainSpec{}}); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("drain of an unknown node: %v", err)
	}
	if _, err := h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: "node-a", Spec: &structs.DrainSpec{Deadline: -5 * time.Second}}); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("negative deadline: %v", err)
	}
	if _, err := h.leader.UpdateNodeEligibility(h.ctx, "node-a", "maybe"); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("unknown eligibility: %v", err)
	}
	if _, err := h.leader.UpdateNodeEligibility(h.ctx, "nope", structs.NodeSchedulingIneligible); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("eligibility of an unknown node: %v", err)
	}
	if n, _ := h.store().Snapshot().NodeByID("node-a"); n.ModifyIndex != n.CreateIndex || n.DrainStrategy != nil {
		t.Fatalf("refused requests changed the node: %+v", n)
	}

	sys := testJob("agent", 1, 50)
	sys.Type = structs.JobTypeSystem
	sys.TaskGroups[0].ReschedulePolicy = nil
	_, err = h.leader.RegisterJob(h.ctx, sys)
	must(t, err)
	h.waitFor("the system alloc", func(s *state.Snapshot) bool { return len(allocsOf(s, "agent")) == 1 })
	_, err = h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: "node-a", Spec: &structs.DrainSpec{Deadline: -1}})
	must(t, err)
	h.waitFor("the forced drain complete", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID("node-a")
		return n.DrainStrategy == nil && len(allocsOf(s, "agent")) == 0
	})
	res, err := h.leader.UpdateNodeEligibility(h.ctx, "node-a", structs.NodeSchedulingEligible)
	must(t, err)
	if len(res.EvalIDs) != 1 || res.EvalCreateIndex == 0 {
		t.Fatalf("eligible again: %+v, want the system job's evaluation", res)
	}
	h.waitFor("the system alloc back on the node", func(s *state.Snapshot) bool { return len(allocsOf(s, "agent")) == 1 })

	// Drain, then cancel with MarkEligible.
	_, err = h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: "node-a", Spec: &structs.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true}})
	must(t, err)
	h.waitFor("the drain complete at once (only ignored system allocs)", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID("node-a")
		return n.DrainStrategy == nil && n.LastDrain.Status == structs.DrainStatusComplete
	})
	// A service alloc with nowhere else to go keeps the next drain
	// running.
	_, err = h.leader.UpdateNodeEligibility(h.ctx, "node-a", structs.NodeSchedulingEligible)
	must(t, err)
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 1, 100))
	must(t, err)
	h.waitFor("the web alloc", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 1 })
	_, err = h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: "node-a", Spec: &structs.DrainSpec{Deadline: time.Hour}})
	must(t, err)
	h.waitFor("the web alloc marked", func(s *state.Snapshot) bool { return len(migrating(s, "web")) == 1 })
	h.idle()
	// The drain cannot finish (the web alloc has nowhere to go), so this
	// check does not race the drainer as one during the forced drain did.
	if _, err := h.leader.UpdateNodeEligibility(h.ctx, "node-a", structs.NodeSchedulingEligible); !errors.Is(err, state.ErrInvalid) {
		t.Errorf("eligible while draining: %v", err)
	}
	_, err = h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: "node-a", MarkEligible: true})
	must(t, err)
	n, _ := h.store().Snapshot().NodeByID("node-a")
	if n.DrainStrategy != nil || n.SchedulingEligibility != structs.NodeSchedulingEligible {
		t.Fatalf("cancelled with MarkEligible: %+v", n)
	}
	var msgs []string
	for _, e := range n.Events {
		msgs = append(msgs, e.Message)
	}
	want := []string{structs.NodeEligibilityEventEligible, structs.NodeDrainEventDrainSet, structs.NodeDrainEventComplete,
		structs.NodeEligibilityEventEligible, structs.NodeDrainEventDrainSet, structs.NodeDrainEventDrainDisabled,
		structs.NodeEligibilityEventEligible}
	if got := msgs[len(msgs)-len(want):]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want them to end with %v", msgs, want)
	}
}
