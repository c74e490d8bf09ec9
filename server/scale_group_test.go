package server

import (
	"errors"
	"testing"
)

// A scaling without a group is refused as invalid (400) before the job is
// looked up, as Nomad's: also for a job that does not exist; with a
// group, an unknown job is not found (404).
func TestScaleWithoutGroupIsInvalidBeforeTheJobIsLookedUp(t *testing.T) {
	h := newHarness(t)
	h.start()
	if _, err := h.leader.ScaleJob(h.ctx, ScaleRequest{JobID: "i-dont-exist", Count: int64p(1)}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("no group, unknown job: %v", err)
	}
	if _, err := h.leader.ScaleJob(h.ctx, ScaleRequest{JobID: "i-dont-exist", Group: "g", Count: int64p(1)}); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
}
