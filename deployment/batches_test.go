package deployment

import (
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

var bt0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func placed(id, dep string, index uint64, at time.Time) *structs.Allocation {
	return &structs.Allocation{ID: id, DeploymentID: dep, TaskGroup: "web", CreateIndex: index, ModifyIndex: index,
		CreateTime: at.UnixNano(), ModifyTime: at.UnixNano(), DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus: structs.AllocClientStatusPending}
}

func healthy(a *structs.Allocation, at time.Time, ok bool) *structs.Allocation {
	c := a.Copy()
	c.ClientStatus = structs.AllocClientStatusRunning
	c.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &ok, Timestamp: at}
	return c
}

// A batch (one entry's placements in a deployment group) lasts from its
// placement to its last allocation's healthy verdict; an unhealthy one
// fails it; the times come from the allocations, not a clock.
func TestBatchTracker(t *testing.T) {
	tr := NewBatchTracker()
	var f BatchFigures
	a1, a2 := placed("a1", "d1", 10, bt0), placed("a2", "d1", 10, bt0)
	b1 := placed("b1", "d1", 20, bt0.Add(time.Minute))
	tr.ObserveAlloc(10, a1, &f)
	tr.ObserveAlloc(10, a2, &f)
	tr.ObserveAlloc(11, a1, &f) // the client's pending report: nothing yet
	tr.ObserveAlloc(20, b1, &f)
	if tr.Tracked() != 3 || len(f.AllocHealthy)+len(f.BatchesHealthy)+f.BatchesFailed != 0 {
		t.Fatalf("tracked %d, figures %+v", tr.Tracked(), f)
	}
	tr.ObserveAlloc(12, healthy(a1, bt0.Add(20*time.Second), true), &f)
	if len(f.BatchesHealthy) != 0 || !slices.Equal(f.AllocHealthy, []time.Duration{20 * time.Second}) {
		t.Fatalf("after a1 healthy: %+v", f)
	}
	tr.ObserveAlloc(13, healthy(a2, bt0.Add(30*time.Second), true), &f)
	if !slices.Equal(f.BatchesHealthy, []time.Duration{30 * time.Second}) {
		t.Fatalf("batch 10: %+v", f)
	}
	// An unhealthy allocation fails its batch.
	tr.ObserveAlloc(21, healthy(b1, bt0.Add(2*time.Minute), false), &f)
	if f.BatchesFailed != 1 || tr.Tracked() != 0 {
		t.Fatalf("batch 20: %+v, tracked %d", f, tr.Tracked())
	}
	// An allocation first seen already decided (a leader that took over
	// mid-rollout) is not measured; a stopped one fails its batch.
	tr.ObserveAlloc(30, healthy(placed("c1", "d2", 30, bt0), bt0, true), &f)
	c2 := placed("c2", "d2", 31, bt0)
	tr.ObserveAlloc(31, c2, &f)
	stopped := c2.Copy()
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	tr.ObserveAlloc(32, stopped, &f)
	if f.BatchesFailed != 2 || tr.Tracked() != 0 {
		t.Fatalf("stopped: %+v", f)
	}
	// A deployment that ends drops its batches uncounted.
	tr.ObserveAlloc(40, placed("e1", "d3", 40, bt0), &f)
	tr.ObserveDeployment(&structs.Deployment{ID: "d3", Status: structs.DeploymentStatusCancelled})
	if tr.Tracked() != 0 || f.BatchesFailed != 2 || len(f.BatchesHealthy) != 1 {
		t.Fatalf("cancelled: %+v, tracked %d", f, tr.Tracked())
	}
	// Moved in place into a newer deployment: measured there from the
	// move (its ModifyTime).
	moved := placed("m1", "d4", 5, bt0)
	moved.ModifyIndex, moved.ModifyTime = 50, bt0.Add(time.Hour).UnixNano()
	tr.ObserveAlloc(50, moved, &f)
	tr.ObserveAlloc(51, healthy(moved, bt0.Add(time.Hour+5*time.Second), true), &f)
	if got := f.BatchesHealthy[len(f.BatchesHealthy)-1]; got != 5*time.Second {
		t.Fatalf("in-place batch %v", got)
	}
}
