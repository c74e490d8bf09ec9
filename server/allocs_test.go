package server

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

func TestClientUpdatesCoalesceWhileAWriteIsInFlight(t *testing.T) {
	h, allocs, entered, release, joined := heldClientWrite(t, 6)
	before := h.raft.entries(fsm.AllocClientUpdateRequestType)

	var wg sync.WaitGroup
	results, call := concurrentReports(t, h, allocs, &wg)
	wg.Add(1)
	go call(0)
	<-entered
	for i := 1; i < len(allocs); i++ {
		wg.Add(1)
		go call(i)
	}
	for i := 1; i < len(allocs); i++ {
		<-joined
	}
	close(release)
	wg.Wait()

	if got := h.raft.entries(fsm.AllocClientUpdateRequestType) - before; got != 2 {
		t.Fatalf("%d client update entries, want 2 (one in flight, one coalesced)", got)
	}
	for i := 2; i < len(results); i++ {
		if results[i] != results[1] || results[i] <= results[0] {
			t.Fatalf("entry indexes %v: callers 1.. should share the second entry", results)
		}
	}
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		if a.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("alloc %s is %s", a.Name, a.ClientStatus)
		}
	}
}

// A long flush (one batch after another under sustained load) gives each
// batch its own timeout: a batch written after the first one took longer
// than the timeout still succeeds.
func TestClientUpdateBatchesEachGetTheirOwnTimeout(t *testing.T) {
	saved := clientWriteTimeout
	clientWriteTimeout = 200 * time.Millisecond
	t.Cleanup(func() { clientWriteTimeout = saved })
	// Hold the first write past the timeout while a second caller joins
	// the next batch.
	h, allocs, entered, release, joined := heldClientWrite(t, 2)
	errs := make(chan error, 2)
	for i, a := range allocs {
		go func() {
			_, err := h.reportRunning(a)
			errs <- err
		}()
		if i == 0 {
			<-entered
		}
	}
	<-joined
	time.Sleep(2 * clientWriteTimeout) // the first write outlasts one timeout
	close(release)
	for range allocs {
		if err := <-errs; err != nil {
			t.Fatalf("client update failed: %v", err)
		}
	}
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		if a.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("alloc %s is %s", a.Name, a.ClientStatus)
		}
	}
}

// Callers that arrive while a write is in flight fill batches of at most
// maxClientBatchAllocs allocations, written one after the other, so that
// no entry grows with the number of reporting clients.
func TestClientUpdateBatchesAreBounded(t *testing.T) {
	defer func(n int) { maxClientBatchAllocs = n }(maxClientBatchAllocs)
	maxClientBatchAllocs = 2
	h, allocs, entered, release, joined := heldClientWrite(t, 6)
	before := h.raft.entries(fsm.AllocClientUpdateRequestType)
	var sizes []int

	var wg sync.WaitGroup
	_, call := concurrentReports(t, h, allocs, &wg)
	wg.Add(1)
	go call(0)
	<-entered
	for i := 1; i < len(allocs); i++ {
		wg.Add(1)
		go call(i)
		<-joined // one at a time, so the batches fill in order
	}
	h.leader.clients.mu.Lock()
	for _, b := range h.leader.clients.queue {
		sizes = append(sizes, len(b.allocs))
	}
	h.leader.clients.mu.Unlock()
	close(release)
	wg.Wait()

	if fmt.Sprint(sizes) != "[2 2 1]" {
		t.Fatalf("waiting batches hold %v allocs, want [2 2 1]", sizes)
	}
	if got := h.raft.entries(fsm.AllocClientUpdateRequestType) - before; got != 4 {
		t.Fatalf("%d client update entries, want 4 (one in flight, three bounded batches)", got)
	}
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		if a.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("alloc %s is %s", a.Name, a.ClientStatus)
		}
	}
}

// reportRunning reports the alloc running, as its client would, and returns the
// index of the entry that carried the report.
func (h *harness) reportRunning(a *structs.Allocation) (uint64, error) {
	return h.leader.UpdateAllocsFromClient(h.ctx, []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning}})
}

// idleWithAllocs starts a leader with one node running n allocs of
// "web" (as placed: no report yet) and waits until it is idle.
func idleWithAllocs(t *testing.T, n int) (*harness, []*structs.Allocation) {
	t.Helper()
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 8000, 8192))
	must(t, err)
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", n, 100))
	must(t, err)
	h.waitFor(fmt.Sprintf("%d allocs", n), func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == n })
	h.idle()
	return h, allocsOf(h.store().Snapshot(), "web")
}

// heldClientWrite starts a leader with one node running n allocs of
// "web", and holds the first client update write in Raft (entered is
// closed when it arrives) until release is closed; joined receives one
// value per caller that joined a batch meanwhile.
func heldClientWrite(t *testing.T, n int) (h *harness, allocs []*structs.Allocation, entered, release, joined chan struct{}) {
	t.Helper()
	h, allocs = idleWithAllocs(t, n)
	entered, release = h.raft.holdFirst(fsm.AllocClientUpdateRequestType)
	joined = make(chan struct{}, len(allocs))
	h.leader.clients.mu.Lock()
	h.leader.clients.onJoin = func() { joined <- struct{}{} }
	h.leader.clients.mu.Unlock()
	return h, allocs, entered, release, joined
}

// heldEnqueueRaft is a fakeRaft that can enqueue; client update entries
// are announced on handed when enqueued and applied, in the order they
// were enqueued, only once release is closed.
type heldEnqueueRaft struct {
	*fakeRaft
	handed  chan struct{}
	release chan struct{}
	mu      sync.Mutex
	last    chan struct{} // closed once the last enqueued entry is applied
}

func (r *heldEnqueueRaft) Enqueue(ctx context.Context, t fsm.MessageType, req any) func() (any, uint64, error) {
	if t != fsm.AllocClientUpdateRequestType {
		resp, idx, err := r.Apply(ctx, t, req)
		return func() (any, uint64, error) { return resp, idx, err }
	}
	r.mu.Lock()
	prev, done := r.last, make(chan struct{})
	r.last = done
	r.mu.Unlock()
	var resp any
	var idx uint64
	var err error
	go func() {
		defer close(done)
		<-r.release
		if prev != nil {
			<-prev
		}
		resp, idx, err = r.Apply(ctx, t, req)
	}()
	r.handed <- struct{}{}
	return func() (any, uint64, error) {
		<-done
		return resp, idx, err
	}
}

// With a Raft that can enqueue, a report that arrives while an entry is
// in flight is handed over at once in the next entry, without waiting for
// the first to commit; both callers get their own entry's index, in order.
func TestClientUpdatesPipelineWithAnEnqueuingRaft(t *testing.T) {
	held := &heldEnqueueRaft{handed: make(chan struct{}, 8), release: make(chan struct{})}
	h := newHarness(t, func(c *Config) {
		held.fakeRaft = c.Raft.(*fakeRaft)
		c.Raft = held
	})
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 8000, 8192))
	must(t, err)
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 2, 100))
	must(t, err)
	h.waitFor("2 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	h.idle()
	allocs := allocsOf(h.store().Snapshot(), "web")

	var wg sync.WaitGroup
	results, call := concurrentReports(t, h, allocs, &wg)
	handed := func(n int) {
		t.Helper()
		select {
		case <-held.handed:
		case <-time.After(testTimeout):
			t.Fatalf("entry %d was not handed to Raft while the one before it was in flight", n)
		}
	}
	wg.Add(2)
	go call(0)
	handed(1)
	go call(1)
	handed(2)
	close(held.release)
	wg.Wait()
	if results[0] == 0 || results[1] <= results[0] {
		t.Fatalf("entry indexes %v, want two entries in order", results)
	}
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		if a.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("alloc %s is %s", a.Name, a.ClientStatus)
		}
	}
}

// concurrentReports returns the indexes of allocs' running reports and the
// function that sends the i-th (in a goroutine counted by wg) and records
// its index.
func concurrentReports(t *testing.T, h *harness, allocs []*structs.Allocation, wg *sync.WaitGroup) ([]uint64, func(i int)) {
	results := make([]uint64, len(allocs))
	return results, func(i int) {
		defer wg.Done()
		idx, err := h.reportRunning(allocs[i])
		if err != nil {
			t.Error(err)
		}
		results[i] = idx
	}
}

// Reports of different callers that arrive within clientBatchWindow of
// the first go in one entry, though no write was in flight when the
// first arrived: each caller gets that entry's index.
func TestClientUpdatesGatherForTheWindow(t *testing.T) {
	defer func(w time.Duration) { clientBatchWindow = w }(clientBatchWindow)
	clientBatchWindow = 300 * time.Millisecond
	h, allocs := idleWithAllocs(t, 3)
	joined := make(chan struct{}, len(allocs))
	h.leader.clients.mu.Lock()
	h.leader.clients.onJoin = func() { joined <- struct{}{} }
	h.leader.clients.mu.Unlock()
	before := h.raft.entries(fsm.AllocClientUpdateRequestType)

	var wg sync.WaitGroup
	results, call := concurrentReports(t, h, allocs, &wg)
	wg.Add(len(allocs))
	go call(0)
	for i := 1; i < len(allocs); i++ {
		go call(i)
		select {
		case <-joined:
		case <-time.After(testTimeout):
			t.Fatalf("report %d did not join the waiting batch", i)
		}
	}
	wg.Wait()
	if got := h.raft.entries(fsm.AllocClientUpdateRequestType) - before; got != 1 {
		t.Fatalf("%d client update entries for reports within one window, want 1", got)
	}
	if results[0] == 0 || results[1] != results[0] || results[2] != results[0] {
		t.Fatalf("callers got indexes %v, want one entry's", results)
	}
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		if a.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("alloc %s is %s", a.Name, a.ClientStatus)
		}
	}
}

// A report the scheduler waits on (here a failure, which carries a retry
// evaluation) that opens or joins a batch when no other batch opened
// within the window is written at once, with what gathered before it:
// the window is for reports that arrive together, and the last report of
// a rollout's stage, which comes alone, waited it out for nothing.
func TestUrgentReportAloneIsWrittenAtOnce(t *testing.T) {
	defer func(w time.Duration) { clientBatchWindow = w }(clientBatchWindow)
	clientBatchWindow = time.Hour // a batch that waits its window is never written in this test
	h, allocs := idleWithAllocs(t, 2)
	before := h.raft.entries(fsm.AllocClientUpdateRequestType)

	// A report that is not urgent opens a batch and waits its window...
	ranIdx := make(chan uint64, 1)
	go func() {
		idx, err := h.reportRunning(allocs[0])
		if err != nil {
			t.Error(err)
		}
		ranIdx <- idx
	}()
	deadline := time.Now().Add(testTimeout)
	for {
		h.leader.clients.mu.Lock()
		queued := len(h.leader.clients.queue)
		h.leader.clients.mu.Unlock()
		if queued == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first report opened no batch")
		}
		time.Sleep(time.Millisecond)
	}
	// ...until a failure joins it: both are written then, in one entry.
	ctx, cancel := context.WithTimeout(h.ctx, testTimeout)
	defer cancel()
	idx, err := h.leader.UpdateAllocsFromClient(ctx, []*structs.Allocation{{ID: allocs[1].ID, ClientStatus: structs.AllocClientStatusFailed}})
	if err != nil {
		t.Fatalf("the failure was not written at once: %v", err)
	}
	select {
	case ran := <-ranIdx:
		if ran != idx {
			t.Fatalf("the reports went in entries %d and %d, want one", ran, idx)
		}
	case <-time.After(testTimeout):
		t.Fatal("the report the failure joined was not written with it")
	}
	if got := h.raft.entries(fsm.AllocClientUpdateRequestType) - before; got != 1 {
		t.Fatalf("%d client update entries, want 1", got)
	}
	s := h.store().Snapshot()
	for i, want := range []string{structs.AllocClientStatusRunning, structs.AllocClientStatusFailed} {
		if a, _ := s.AllocByID(allocs[i].ID); a == nil || a.ClientStatus != want {
			t.Fatalf("alloc %d is %+v, want %s", i, a, want)
		}
	}
}
