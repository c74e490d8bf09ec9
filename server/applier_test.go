package server

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// placedAlloc returns an alloc of job on node using cpu MHz and the given
// host ports.
func placedAlloc(id string, job *structs.Job, node string, cpu int64, ports ...int) *structs.Allocation {
	a := &structs.Allocation{
		ID: id, Namespace: structs.DefaultNamespace, Name: structs.AllocName(job.ID, "web", 0),
		NodeID: node, JobID: job.ID, Job: job, TaskGroup: "web",
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{"app": {Cpu: structs.AllocatedCpuResources{CpuShares: cpu}}},
		},
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
	}
	for _, p := range ports {
		a.AllocatedResources.Shared.Ports = append(a.AllocatedResources.Shared.Ports, structs.PortMapping{Label: "http", Value: p})
	}
	return a
}

// applierState is a store with node "node-a" (1000 MHz) running alloc
// "old" (600 MHz, port 8080) of job web.
func applierState(t *testing.T) (*state.Store, *structs.Job) {
	t.Helper()
	s, err := state.New()
	must(t, err)
	must(t, s.UpsertNode(1, testNode("a", 1000, 4096)))
	must(t, s.UpsertNode(2, testNode("b", 1000, 4096)))
	job := testJob("web", 1, 600)
	_, err = s.RegisterJob(3, &structs.JobRegisterRequest{Job: job})
	must(t, err)
	must(t, s.UpsertAllocs(4, []*structs.Allocation{placedAlloc("old", job, "node-a", 600, 8080)}, 1))
	return s, job
}

func ids(allocs []*structs.Allocation) []string {
	var out []string
	for _, a := range allocs {
		out = append(out, a.ID)
	}
	return out
}

func TestCheckPlanCapacityAcrossPlacements(t *testing.T) {
	s, job := applierState(t)
	p := &planSubmission{job: job, placed: []*structs.Allocation{
		placedAlloc("p1", job, "node-b", 600),
		placedAlloc("p2", job, "node-b", 600), // b is full after p1
		placedAlloc("p3", job, "node-a", 300), // fits beside old
		placedAlloc("p4", job, "node-a", 300), // does not
	}}
	acc, stops, rej, err := checkPlan(s.Snapshot(), p, nil, nil)
	must(t, err)
	if got := ids(acc); len(got) != 2 || got[0] != "p1" || got[1] != "p3" {
		t.Fatalf("accepted %v, want [p1 p3]", got)
	}
	if len(rej) != 2 || rej[0] != "p2" || rej[1] != "p4" || len(stops) != 0 {
		t.Fatalf("rejected %v stops %v", rej, stops)
	}
}

func TestCheckPlanReplacementKeepsOldWhenRejected(t *testing.T) {
	s, job := applierState(t)
	stop := &structs.AllocStopUpdate{AllocID: "old", DesiredDescription: structs.AllocUpdating}
	// The replacement fits only because it frees old's resources.
	p := &planSubmission{job: job, placed: []*structs.Allocation{placedAlloc("new", job, "node-a", 900, 8080)},
		replaces: map[string]*structs.AllocStopUpdate{"new": stop}}
	acc, stops, rej, err := checkPlan(s.Snapshot(), p, nil, nil)
	must(t, err)
	if len(acc) != 1 || len(rej) != 0 || len(stops) != 1 || stops[0] != stop {
		t.Fatalf("accepted %v rejected %v stops %v", ids(acc), rej, stops)
	}

	// Too big even with old gone: rejected, and old is not stopped.
	p.placed = []*structs.Allocation{placedAlloc("new", job, "node-a", 1100)}
	acc, stops, rej, err = checkPlan(s.Snapshot(), p, nil, nil)
	must(t, err)
	if len(acc) != 0 || len(rej) != 1 || len(stops) != 0 {
		t.Fatalf("accepted %v rejected %v stops %v", ids(acc), rej, stops)
	}
}

func TestCheckPlanPortsAndStops(t *testing.T) {
	s, job := applierState(t)
	p := &planSubmission{job: job, placed: []*structs.Allocation{placedAlloc("clash", job, "node-a", 100, 8080)}}
	_, _, rej, err := checkPlan(s.Snapshot(), p, nil, nil)
	must(t, err)
	if len(rej) != 1 {
		t.Fatal("a placement on a taken port was accepted")
	}
	// Stopping old in the same plan frees its port and CPU.
	p.stops = []*structs.AllocStopUpdate{{AllocID: "old"}}
	p.placed = []*structs.Allocation{placedAlloc("clash", job, "node-a", 1000, 8080)}
	acc, stops, rej, err := checkPlan(s.Snapshot(), p, nil, nil)
	must(t, err)
	if len(acc) != 1 || len(rej) != 0 || len(stops) != 1 {
		t.Fatalf("accepted %v rejected %v stops %v", ids(acc), rej, stops)
	}
}

func TestCheckPlanNodeNotReady(t *testing.T) {
	s, job := applierState(t)
	must(t, s.UpdateNodeStatus(5, &structs.NodeUpdateStatusRequest{NodeID: "node-b", Status: structs.NodeStatusDown}))
	n := testNode("c", 4000, 4096)
	n.SchedulingEligibility = structs.NodeSchedulingIneligible
	must(t, s.UpsertNode(6, n))
	p := &planSubmission{job: job, placed: []*structs.Allocation{
		placedAlloc("on-down", job, "node-b", 1),
		placedAlloc("on-ineligible", job, "node-c", 1),
		placedAlloc("on-missing", job, "node-zz", 1),
	}}
	acc, _, rej, err := checkPlan(s.Snapshot(), p, nil, nil)
	must(t, err)
	if len(acc) != 0 || len(rej) != 3 {
		t.Fatalf("accepted %v rejected %v", ids(acc), rej)
	}
}

func TestPlanFencedAfterLeadershipLoss(t *testing.T) {
	h := newHarness(t)
	_, _, err := h.leader.RegisterNode(context.Background(), testNode("a", 4000, 4096))
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	tm, err := h.leader.newTerm(ctx)
	must(t, err)
	cancel()
	before := h.raft.entries(fsmPlanType)
	job := testJob("web", 1, 100)
	p := &planSubmission{job: job, placed: []*structs.Allocation{placedAlloc("x", job, "node-a", 100)}, resp: make(chan planResult, 1)}
	if cur := h.leader.applyPlan(tm, p, nil); cur != nil {
		t.Fatal("a fenced plan is in flight")
	}
	if res := <-p.resp; !errors.Is(res.err, ErrPlanFenced) {
		t.Fatalf("applyPlan after loss: %v", res.err)
	}
	if res := h.leader.submitPlan(tm, p); !errors.Is(res.err, ErrPlanFenced) {
		t.Fatalf("submitPlan after loss: %v", res.err)
	}
	if h.raft.entries(fsmPlanType) != before {
		t.Fatal("a fenced plan was written")
	}
}

func TestMaxPlanAttemptsLeavesFollowup(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxPlanAttempts = 1 })
	h.leader.beforePlanCheck = func(p *planSubmission) {
		for _, a := range p.placed {
			if _, err := h.leader.UpdateNodeStatus(h.ctx, a.NodeID, structs.NodeStatusDown, "test"); err != nil {
				t.Error(err)
			}
		}
	}
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096))
	must(t, err)
	res, err := h.leader.RegisterJob(h.ctx, testJob("web", 1, 100))
	must(t, err)
	h.waitFor("the eval failed with a follow-up", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID(res.EvalID)
		if e == nil || e.Status != structs.EvalStatusFailed || e.NextEval == "" {
			return false
		}
		f, _ := s.EvalByID(e.NextEval)
		return f != nil && f.TriggeredBy == structs.EvalTriggerMaxPlans && f.Status == structs.EvalStatusPending
	})
	if n := len(allocsOf(h.store().Snapshot(), "web")); n != 0 {
		t.Fatalf("%d allocs committed", n)
	}
}

func TestCheckPlanCountsThePlanInFlight(t *testing.T) {
	s, job := applierState(t)
	prev := &inflight{
		done:    make(chan struct{}),
		byNode:  map[string][]*structs.Allocation{"node-b": {placedAlloc("committing", job, "node-b", 800)}},
		stopped: map[string]bool{"old": true},
	}
	p := &planSubmission{job: job, placed: []*structs.Allocation{
		placedAlloc("on-b", job, "node-b", 300),        // b is taken by the plan in flight
		placedAlloc("on-a", job, "node-a", 1000, 8080), // a is freed by its stop
	}}
	acc, _, rej, err := checkPlan(s.Snapshot(), p, prev, nil)
	must(t, err)
	if len(acc) != 1 || acc[0].ID != "on-a" || len(rej) != 1 || rej[0] != "on-b" {
		t.Fatalf("accepted %v rejected %v, want on-a accepted and on-b rejected", ids(acc), rej)
	}
	// Without the plan in flight the verdicts flip.
	acc, _, rej, err = checkPlan(s.Snapshot(), p, nil, nil)
	must(t, err)
	if len(acc) != 1 || acc[0].ID != "on-b" || len(rej) != 1 || rej[0] != "on-a" {
		t.Fatalf("accepted %v rejected %v without the plan in flight", ids(acc), rej)
	}
}

// The applier lets a plan go once it committed, without waiting for the
// next plan: the plan holds every allocation it placed (the store holds
// its own copies), and after a large placement nothing else may come for
// a long time.
func TestApplierLetsACommittedPlanGo(t *testing.T) {
	h := newHarness(t)
	_, _, err := h.leader.RegisterNode(context.Background(), testNode("a", 4000, 4096))
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm, err := h.leader.newTerm(ctx)
	must(t, err)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		h.leader.runPlanApplier(tm)
	}()
	defer func() {
		cancel()
		<-stopped
	}()

	job := testJob("web", 1, 100)
	alloc := placedAlloc("x", job, "node-a", 100)
	kept := weak.Make(alloc)
	res := h.leader.submitPlan(tm, &planSubmission{job: job, placed: []*structs.Allocation{alloc}, resp: make(chan planResult, 1)})
	if res.err != nil || len(res.rejected) != 0 {
		t.Fatalf("plan: %+v", res)
	}
	alloc = nil
	if stored, err := h.raft.fsm.State().Snapshot().AllocByID("x"); err != nil || stored == nil {
		t.Fatalf("the placement is not in the state: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for kept.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the applier still holds the committed plan's allocation")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
