package server

import (
	"errors"
	"testing"

	"github.com/droverhq/drover/state"
)

// RegisterJobChecked registers only when the stored job's modify index is
// the one given (0: the job must not exist), in the same write.
func TestRegisterJobChecked(t *testing.T) {
	h := newHarness(t)
	h.start()
	first, err := h.leader.RegisterJobChecked(h.ctx, testJob("web", 1, 100), 0)
	if err != nil {
		t.Fatalf("a new job with index 0: %v", err)
	}
	if _, err := h.leader.RegisterJobChecked(h.ctx, testJob("web", 2, 100), 0); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("index 0 for an existing job: got %v, want ErrConflict", err)
	}
	if _, err := h.leader.RegisterJobChecked(h.ctx, testJob("web", 2, 100), first.JobModifyIndex+99); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("a stale index: got %v, want ErrConflict", err)
	}
	job, _ := h.store().Snapshot().JobByID("default", "web")
	if job.TaskGroups[0].Count != 1 {
		t.Fatalf("a refused registration changed the job: count %d", job.TaskGroups[0].Count)
	}
	second, err := h.leader.RegisterJobChecked(h.ctx, testJob("web", 2, 100), first.JobModifyIndex)
	if err != nil || second.JobVersion != 1 {
		t.Fatalf("the current index: %v, %+v", err, second)
	}
}
