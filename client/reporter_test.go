package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// gatedSend records batches; each send waits until released.
type gatedSend struct {
	mu      sync.Mutex
	batches [][]*structs.Allocation
	at      []time.Time
	gate    chan error
}

func (g *gatedSend) send(ctx context.Context, b []*structs.Allocation) error {
	g.mu.Lock()
	g.batches = append(g.batches, b)
	g.at = append(g.at, time.Now())
	g.mu.Unlock()
	select {
	case err := <-g.gate:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedSend) sent() [][]*structs.Allocation {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]*structs.Allocation(nil), g.batches...)
}

func status(id, s string) *structs.Allocation { return &structs.Allocation{ID: id, ClientStatus: s} }

// runReporter starts a reporter with the given window that sends through
// a gated send, until the test ends. Call it inside a synctest bubble.
func runReporter(t *testing.T, window time.Duration) (*gatedSend, *reporter) {
	g := &gatedSend{gate: make(chan error)}
	r := newReporter(g.send, clock.Real{}, hclog.NewNullLogger(), time.Second, window)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go r.run(ctx)
	return g, r
}

func TestReporterSendsAtOnceAndCoalescesWhileInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, r := runReporter(t, reportWindow)
		start := time.Now()
		r.enqueue(status("a", "running"), true)
		synctest.Wait()
		if b := g.sent(); len(b) != 1 || len(b[0]) != 1 || !g.at[0].Equal(start) {
			t.Fatalf("urgent change not sent at once: %v", b)
		}
		// While the first send is in flight, three changes to two allocs.
		r.enqueue(status("a", "complete"), false)
		r.enqueue(status("b", "pending"), false)
		r.enqueue(status("b", "running"), false)
		synctest.Wait()
		if n := len(g.sent()); n != 1 {
			t.Fatalf("%d sends while one was in flight", n)
		}
		g.gate <- nil
		synctest.Wait()
		b := g.sent()
		if len(b) != 2 || len(b[1]) != 2 || b[1][0].ClientStatus != "complete" || b[1][1].ClientStatus != "running" {
			t.Fatalf("second batch %v", b)
		}
		if !g.at[1].Equal(start) {
			t.Fatal("what piled up during a send waited for a timer")
		}
		g.gate <- nil
		synctest.Wait()
		if n := len(g.sent()); n != 2 {
			t.Fatalf("%d sends with nothing new", n)
		}
		// The wake-ups of the changes that went with the second send
		// start no window: a later change waits its own in full.
		time.Sleep(reportWindow / 5)
		later := time.Now()
		r.enqueue(status("c", "pending"), false)
		time.Sleep(reportWindow)
		synctest.Wait()
		if b := g.sent(); len(b) != 3 || !g.at[2].Equal(later.Add(reportWindow)) {
			t.Fatalf("sends at %v, want the third at %v", g.at, later.Add(reportWindow))
		}
		g.gate <- nil
	})
}

// A change nobody waits on is held for the window, and goes with what
// follows it; an urgent change ends the wait.
func TestReporterHoldsChangesThatAreNotUrgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, r := runReporter(t, reportWindow)
		start := time.Now()
		r.enqueue(status("a", "pending"), false)
		time.Sleep(reportWindow / 2)
		r.enqueue(status("a", "running"), false)
		r.enqueue(status("b", "running"), false)
		synctest.Wait()
		if n := len(g.sent()); n != 0 {
			t.Fatalf("%d sends within the window", n)
		}
		time.Sleep(reportWindow / 2)
		synctest.Wait()
		b := g.sent()
		if len(b) != 1 || len(b[0]) != 2 || b[0][0].ClientStatus != "running" || !g.at[0].Equal(start.Add(reportWindow)) {
			t.Fatalf("batch %v at %v, want both running at the window's end", b, g.at)
		}
		g.gate <- nil
		synctest.Wait()

		start = time.Now()
		r.enqueue(status("c", "pending"), false)
		time.Sleep(reportWindow / 5)
		r.enqueue(status("a", "running"), true) // healthy, say
		synctest.Wait()
		b = g.sent()
		if len(b) != 2 || len(b[1]) != 2 || !g.at[1].Equal(start.Add(reportWindow/5)) {
			t.Fatalf("batches %v at %v, want the urgent change to take the held one along at once", b, g.at)
		}
		g.gate <- nil
	})
}

func TestReporterRetriesWithoutLosingNewerState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, r := runReporter(t, 0)
		r.enqueue(status("a", "pending"), false)
		r.enqueue(status("b", "pending"), false)
		synctest.Wait()
		r.enqueue(status("a", "running"), false) // newer than the failing batch
		g.gate <- errors.New("server gone")
		synctest.Wait()
		time.Sleep(time.Second) // the retry pause
		synctest.Wait()
		b := g.sent()
		if len(b) != 2 || len(b[1]) != 2 || b[1][0].ClientStatus != "running" || b[1][1].ID != "b" {
			t.Fatalf("retried batch %v", b)
		}
		g.gate <- nil
	})
}

func TestReporterSplitsLargeBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gatedSend{gate: make(chan error)}
		r := newReporter(g.send, clock.Real{}, hclog.NewNullLogger(), time.Second, 0)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i := range maxBatch + 10 {
			r.enqueue(status(fmt.Sprintf("a%04d", i), "running"), false)
		}
		go r.run(ctx)
		synctest.Wait()
		g.gate <- nil
		synctest.Wait()
		g.gate <- nil
		synctest.Wait()
		b := g.sent()
		if len(b) != 2 || len(b[0]) != maxBatch || len(b[1]) != 10 {
			t.Fatalf("batches of %d", len(b))
		}
	})
}

// A report whose task states are those of the alloc's last report the
// servers took leaves them out (the servers keep theirs); a changed
// state, a report after a failed send of the states, and every report
// after forget carry them.
func TestReporterLeavesOutTaskStatesTheServersHave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, r := runReporter(t, 0)
		running := map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning}}
		report := func(states map[string]*structs.TaskState) {
			a := status("a", "running")
			a.TaskStates = states
			r.enqueue(a, true)
			synctest.Wait()
		}
		last := func() *structs.Allocation {
			b := g.sent()
			return b[len(b)-1][0]
		}
		report(running)
		if last().TaskStates == nil {
			t.Fatal("first report without its task states")
		}
		g.gate <- errors.New("server down") // not taken: sent again in full
		time.Sleep(time.Second)
		synctest.Wait()
		if last().TaskStates == nil {
			t.Fatal("retry of a report the servers did not take left its task states out")
		}
		g.gate <- nil
		synctest.Wait()
		// The same states in a new map (the runner's next update, a
		// health verdict): left out.
		report(map[string]*structs.TaskState{"web": running["web"]})
		if a := last(); a.TaskStates != nil || a.ClientStatus != "running" {
			t.Fatalf("unchanged states sent again: %+v", a)
		}
		g.gate <- nil
		synctest.Wait()
		dead := map[string]*structs.TaskState{"web": {State: structs.TaskStateDead}}
		report(dead)
		if last().TaskStates == nil {
			t.Fatal("changed states left out")
		}
		g.gate <- nil
		synctest.Wait()
		r.forget("")
		report(dead)
		if last().TaskStates == nil {
			t.Fatal("states left out after forget")
		}
		g.gate <- nil
		synctest.Wait()
	})
}
