package evalbroker

import (
	"container/heap"
	"time"

	"github.com/droverhq/drover/structs"
)

// jobKey names a job across namespaces.
type jobKey struct {
	namespace string
	jobID     string
}

// keyOf returns the job key of an evaluation and whether it has one;
// evaluations without a job are not serialised.
func keyOf(e *structs.Evaluation) (jobKey, bool) {
	return jobKey{namespace: e.Namespace, jobID: e.JobID}, e.JobID != ""
}

// phase is where a tracked evaluation is inside the broker.
type phase uint8

const (
	phaseReady   phase = iota // in a ready queue, holding its job's slot
	phaseUnacked              // out with a worker, holding its job's slot
	phaseRetry                // waiting out a nack delay, holding its job's slot
	phasePending              // waiting for its job's slot
	phaseDelayed              // waiting for WaitUntil, not holding a slot
)

// entry is the broker's record of one evaluation.
type entry struct {
	eval       *structs.Evaluation
	seq        uint64 // enqueue order, for FIFO among equals
	phase      phase
	deliveries int
	token      string
	timer      Timer     // visibility timer while unacked
	at         time.Time // when a delayed or retrying entry becomes ready
	readySince time.Time // when it last entered a ready queue
}

// before reports whether a leaves the ready queue ahead of b: higher
// priority first, then lower CreateIndex, then earlier enqueue.
func before(a, b *entry) bool {
	if a.eval.Priority != b.eval.Priority {
		return a.eval.Priority > b.eval.Priority
	}
	if a.eval.CreateIndex != b.eval.CreateIndex {
		return a.eval.CreateIndex < b.eval.CreateIndex
	}
	return a.seq < b.seq
}

// newer reports whether a is a newer evaluation of its job than b.
func newer(a, b *entry) bool {
	if a.eval.CreateIndex != b.eval.CreateIndex {
		return a.eval.CreateIndex > b.eval.CreateIndex
	}
	return a.seq > b.seq
}

// readyQueue is a heap of ready entries in dequeue order.
type readyQueue []*entry

func (q readyQueue) Len() int           { return len(q) }
func (q readyQueue) Less(i, j int) bool { return before(q[i], q[j]) }
func (q readyQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)        { *q = append(*q, x.(*entry)) }
func (q *readyQueue) Pop() any {
	old := *q
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*q = old[:n-1]
	return e
}

// peek returns the first entry, or nil.
func (q readyQueue) peek() *entry {
	if len(q) == 0 {
		return nil
	}
	return q[0]
}

// delayQueue is a heap of delayed and retrying entries by ready time.
type delayQueue []*entry

func (q delayQueue) Len() int { return len(q) }
func (q delayQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q delayQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *delayQueue) Push(x any)   { *q = append(*q, x.(*entry)) }
func (q *delayQueue) Pop() any {
	old := *q
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*q = old[:n-1]
	return e
}

// popDue removes and returns, in order, the entries due at now.
func (q *delayQueue) popDue(now time.Time) []*entry {
	var due []*entry
	for len(*q) > 0 && !(*q)[0].at.After(now) {
		due = append(due, heap.Pop(q).(*entry))
	}
	return due
}

// heapPop pops the first entry of a non-empty ready queue.
func heapPop(q *readyQueue) *entry { return heap.Pop(q).(*entry) }
