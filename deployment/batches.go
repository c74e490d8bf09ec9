package deployment

import (
	"time"

	"github.com/droverhq/drover/structs"
)

// BatchTracker measures rollout batches for the metrics: a batch is the
// allocations of one deployment group that one log entry placed (a
// scheduling pass's plan; a very large plan is several entries), or moved
// into the deployment in place. A batch starts when it is placed, and is
// done when its last allocation turns healthy (its health verdict's time),
// or failed as soon as one of them turns unhealthy or stops first.
//
// It is a pure core: it is fed the allocations and deployments the state
// wrote (the leader reads them from the event stream, see
// server.runRolloutMetrics), reads no clock (every time comes from the
// objects, stamped by the leader into the log) and keeps only the
// allocations still in flight, at most MaxTrackedAllocs of them. It is
// not safe for concurrent use.
type BatchTracker struct {
	batches map[batchKey]*batch
	allocs  map[string]batchKey
}

// MaxTrackedAllocs bounds a BatchTracker: past it, new batches are not
// measured until some finish.
const MaxTrackedAllocs = 100_000

type batchKey struct {
	deployment, group string
	index             uint64
}

type batch struct {
	start       time.Time
	pending     int
	lastHealthy time.Time
}

// BatchFigures is what one observation finished: the placement-to-healthy
// time of each allocation that turned healthy, and the batches done.
type BatchFigures struct {
	AllocHealthy []time.Duration
	// BatchesHealthy holds the duration of each batch whose allocations
	// are all healthy; BatchesFailed counts the batches that failed.
	BatchesHealthy []time.Duration
	BatchesFailed  int
}

// NewBatchTracker returns an empty tracker.
func NewBatchTracker() *BatchTracker {
	return &BatchTracker{batches: map[batchKey]*batch{}, allocs: map[string]batchKey{}}
}

// Tracked is the number of allocations in flight.
func (t *BatchTracker) Tracked() int { return len(t.allocs) }

// ObserveAlloc takes an allocation as the entry at index wrote it, and
// adds to f what it finished.
func (t *BatchTracker) ObserveAlloc(index uint64, a *structs.Allocation, f *BatchFigures) {
	if a == nil || a.DeploymentID == "" {
		return
	}
	k, known := t.allocs[a.ID]
	if known && k.deployment != a.DeploymentID {
		// Moved into a newer deployment in place: the old batch loses it.
		t.forget(a.ID, k)
		known = false
	}
	if !known {
		if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil || done(a) || len(t.allocs) >= MaxTrackedAllocs {
			return // decided already, or seen too late to measure
		}
		k = batchKey{a.DeploymentID, a.TaskGroup, index}
		b := t.batches[k]
		if b == nil {
			start := time.Unix(0, a.ModifyTime)
			if a.CreateIndex == index {
				start = time.Unix(0, a.CreateTime)
			}
			b = &batch{start: start}
			t.batches[k] = b
		}
		b.pending++
		t.allocs[a.ID] = k
		return
	}
	b := t.batches[k]
	switch {
	case a.IsHealthy():
		at := a.DeploymentStatus.Timestamp
		f.AllocHealthy = append(f.AllocHealthy, nonNegative(at.Sub(b.start)))
		if at.After(b.lastHealthy) {
			b.lastHealthy = at
		}
		t.forget(a.ID, k)
		if b.pending == 0 {
			f.BatchesHealthy = append(f.BatchesHealthy, nonNegative(b.lastHealthy.Sub(b.start)))
		}
	case a.IsUnhealthy() || done(a):
		f.BatchesFailed++
		t.dropBatch(k)
	}
}

// ObserveDeployment takes a deployment as written: once it is over
// (successful, failed, cancelled), its batches still in flight are
// dropped without being counted.
func (t *BatchTracker) ObserveDeployment(d *structs.Deployment) {
	if d == nil || d.Active() {
		return
	}
	for k := range t.batches {
		if k.deployment == d.ID {
			t.dropBatch(k)
		}
	}
}

// forget removes one allocation from its batch; the batch goes once it
// has none left.
func (t *BatchTracker) forget(id string, k batchKey) {
	delete(t.allocs, id)
	if b := t.batches[k]; b != nil {
		b.pending--
		if b.pending <= 0 {
			delete(t.batches, k)
		}
	}
}

func (t *BatchTracker) dropBatch(k batchKey) {
	delete(t.batches, k)
	for id, ak := range t.allocs {
		if ak == k {
			delete(t.allocs, id)
		}
	}
}

// done reports whether the allocation stopped (or is told to) before a
// verdict.
func done(a *structs.Allocation) bool { return a.TerminalStatus() }

func nonNegative(d time.Duration) time.Duration { return max(d, 0) }
