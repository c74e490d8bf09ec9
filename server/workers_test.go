package server

import (
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The worker pool is resized while the leader runs: with no worker an
// evaluation waits; once a worker is added it is scheduled.
func TestWorkerPoolResizesWhileLeading(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.NumWorkers = 1 })
	h.start()
	if info := h.leader.SchedulerWorkersInfo(); len(info) != 1 || info[0].Status != "Started" {
		t.Fatalf("workers at start: %+v", info)
	}
	if _, err := h.leader.SetSchedulerWorkerConfig(WorkerPoolConfig{NumSchedulers: -1, EnabledSchedulers: []string{CoreScheduler}}); !errors.Is(err, ErrInvalidWorkerPool) {
		t.Fatalf("negative count: %v", err)
	}
	if _, err := h.leader.SetSchedulerWorkerConfig(WorkerPoolConfig{NumSchedulers: 1, EnabledSchedulers: []string{"service"}}); !errors.Is(err, ErrInvalidWorkerPool) {
		t.Fatalf("without _core: %v", err)
	}
	got, err := h.leader.SetSchedulerWorkerConfig(WorkerPoolConfig{NumSchedulers: 0, EnabledSchedulers: []string{CoreScheduler, "service"}})
	must(t, err)
	if got.NumSchedulers != 0 || len(h.leader.SchedulerWorkersInfo()) != 0 {
		t.Fatalf("after resize to 0: %+v, %+v", got, h.leader.SchedulerWorkersInfo())
	}
	if _, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096)); err != nil {
		t.Fatal(err)
	}
	res, err := h.leader.RegisterJob(h.ctx, testJob("web", 1, 100))
	must(t, err)
	time.Sleep(200 * time.Millisecond)
	if e, _ := h.store().Snapshot().EvalByID(res.EvalID); e == nil || e.Status != structs.EvalStatusPending {
		t.Fatalf("with no worker the evaluation was scheduled: %+v", e)
	}
	_, err = h.leader.SetSchedulerWorkerConfig(WorkerPoolConfig{NumSchedulers: 1, EnabledSchedulers: []string{CoreScheduler, "service"}})
	must(t, err)
	h.waitFor("the eval scheduled by the added worker", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID(res.EvalID)
		return e != nil && e.Status == structs.EvalStatusComplete
	})
}

// PauseEvalBroker in the replicated scheduler configuration stops the
// workers; clearing it resumes them.
func TestPauseEvalBrokerStopsTheWorkers(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.NumWorkers = 2 })
	h.start()
	set := func(paused bool) {
		t.Helper()
		_, _, err := h.raft.Apply(h.ctx, fsm.SchedulerSetConfigRequestType, &structs.SchedulerSetConfigRequest{
			Config: structs.SchedulerConfiguration{SchedulerAlgorithm: "binpack", PauseEvalBroker: paused}})
		must(t, err)
	}
	set(true)
	waitPoolState(t, "workers paused", func() bool {
		info := h.leader.SchedulerWorkersInfo()
		return len(info) == 2 && info[0].Status == "Paused"
	})
	if _, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096)); err != nil {
		t.Fatal(err)
	}
	res, err := h.leader.RegisterJob(h.ctx, testJob("web", 1, 100))
	must(t, err)
	time.Sleep(200 * time.Millisecond)
	if e, _ := h.store().Snapshot().EvalByID(res.EvalID); e == nil || e.Status != structs.EvalStatusPending {
		t.Fatalf("a paused broker's evaluation was scheduled: %+v", e)
	}
	set(false)
	h.waitFor("the eval scheduled once resumed", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID(res.EvalID)
		return e != nil && e.Status == structs.EvalStatusComplete
	})
}

func waitPoolState(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
