package server

import (
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// These tests play a leader change on one Leader: the term ends (h.stop,
// as when leadership is lost), the replicated state moves on, and a new
// term starts (h.start, as on the new leader after its Barrier). Every
// service of the new term must be rebuilt from state alone.

func TestNewTermResumesRolloutFromState(t *testing.T) {
	h := newHarness(t)
	h.start()
	startRollout(t, h)
	h.stop()

	// Between terms the client's health report is committed (the old
	// leader's last entry): nobody acts on it yet.
	h.ctx = t.Context()
	h.markHealthy(byVersion(allocsOf(h.store().Snapshot(), "web"), 1))

	// The new term's watcher sees the health in state and lets the
	// deployment move on; the rollout completes with max_parallel 1.
	h.start()
	for step := 2; step <= 3; step++ {
		h.waitFor("the next replacement", func(s *state.Snapshot) bool {
			return len(byVersion(allocsOf(s, "web"), 1)) == step
		})
		h.idle()
		var pending []*structs.Allocation
		for _, a := range byVersion(allocsOf(h.store().Snapshot(), "web"), 1) {
			if !a.IsHealthy() {
				pending = append(pending, a)
			}
		}
		if len(pending) != 1 {
			t.Fatalf("step %d: %d new allocs awaiting health, want 1\n%s", step, len(pending), h.dump())
		}
		h.markHealthy(pending)
	}
	h.waitFor("v1 successful", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 1)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful
	})
}

func TestNewTermRunsEvaluationsLeftPending(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096))
	must(t, err)
	h.stop()

	// A job registered by the old leader just before it lost leadership:
	// its evaluation is pending in state and in no broker.
	h.ctx = t.Context()
	res, err := h.leader.RegisterJob(h.ctx, testJob("web", 2, 100))
	must(t, err)
	if e, _ := h.store().Snapshot().EvalByID(res.EvalID); e == nil || e.Status != structs.EvalStatusPending {
		t.Fatalf("eval %+v, want pending", e)
	}
	h.start()
	h.waitFor("the pending evaluation run by the new term", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID(res.EvalID)
		return e != nil && e.Status == structs.EvalStatusComplete && len(allocsOf(s, "web")) == 2
	})
}

func TestNewTermKeepsBlockedEvaluations(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 1000, 4096))
	must(t, err)
	// Three allocs of 400 MHz: two fit, the third blocks.
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 3, 400))
	must(t, err)
	h.waitFor("two allocs and a blocked evaluation", func(s *state.Snapshot) bool {
		evals, _ := s.EvalsByJob(structs.DefaultNamespace, "web")
		for _, e := range evals {
			if e.Status == structs.EvalStatusBlocked {
				return len(allocsOf(s, "web")) == 2
			}
		}
		return false
	})
	h.stop()
	h.start()
	// Capacity arrives in the new term: the blocked evaluation, rebuilt
	// from state, is unblocked and places the third alloc.
	_, _, err = h.leader.RegisterNode(h.ctx, testNode("b", 1000, 4096))
	must(t, err)
	h.waitFor("the third alloc after the blocked evaluation was restored", func(s *state.Snapshot) bool {
		return len(allocsOf(s, "web")) == 3
	})
}

func TestNewTermFailsDeploymentWhoseDeadlinePassed(t *testing.T) {
	h := newHarness(t)
	h.start()
	startRollout(t, h)
	d := deploymentOf(h.store().Snapshot(), "web", 1)
	if d == nil || d.Status != structs.DeploymentStatusRunning {
		t.Fatalf("v1 deployment %+v, want running", d)
	}
	h.stop()

	// No leader for longer than the progress deadline (10m by default).
	h.clock.Advance(structs.DefaultUpdateStrategy().ProgressDeadline + time.Second)
	h.start()
	// No further time passes: the new term fails it at once, from the
	// deadline kept in state.
	h.waitFor("the deployment failed on its deadline", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 1)
		return d != nil && d.Status == structs.DeploymentStatusFailed
	})
	d = deploymentOf(h.store().Snapshot(), "web", 1)
	if d.StatusDescription != structs.DeploymentStatusDescriptionProgressDeadline {
		t.Fatalf("description %q", d.StatusDescription)
	}
}

func TestNewTermUnblocksForCapacityAddedBeforeIt(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 1000, 4096))
	must(t, err)
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 3, 400))
	must(t, err)
	h.waitFor("a blocked evaluation", func(s *state.Snapshot) bool {
		evals, _ := s.EvalsByJob(structs.DefaultNamespace, "web")
		for _, e := range evals {
			if e.Status == structs.EvalStatusBlocked {
				return true
			}
		}
		return false
	})
	h.stop()
	// The old leader's last entry adds capacity; its in-memory unblock
	// died with it, so the evaluation still reads blocked in state.
	_, _, err = h.raft.Apply(t.Context(), fsm.NodeRegisterRequestType,
		&structs.NodeRegisterRequest{Node: testNode("b", 1000, 4096)})
	must(t, err)
	h.start()
	h.waitFor("the third alloc placed by the new term", func(s *state.Snapshot) bool {
		return len(allocsOf(s, "web")) == 3
	})
}
