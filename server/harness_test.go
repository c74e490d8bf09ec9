package server

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// testTimeout bounds every wait of a test.
const testTimeout = 20 * time.Second

// fakeRaft is an in-memory log of one server: Apply encodes the request as
// cluster.Server does and applies it to a real FSM at increasing indexes.
type fakeRaft struct {
	mu    sync.Mutex
	fsm   *fsm.FSM
	index uint64
	// count counts entries per type.
	count map[fsm.MessageType]int
	// gate, when set, is called before each entry is applied.
	gate func(t fsm.MessageType)
}

func newFakeRaft(logger hclog.Logger) *fakeRaft {
	return &fakeRaft{fsm: fsm.New(logger), count: map[fsm.MessageType]int{}}
}

func (r *fakeRaft) Apply(ctx context.Context, t fsm.MessageType, req any) (any, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	data, err := fsm.Encode(t, req)
	if err != nil {
		return nil, 0, err
	}
	r.mu.Lock()
	gate := r.gate
	r.mu.Unlock()
	if gate != nil {
		gate(t)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.index++
	r.count[t]++
	resp := r.fsm.Apply(&raft.Log{Index: r.index, Type: raft.LogCommand, Data: data})
	if err, ok := resp.(error); ok {
		return nil, r.index, err
	}
	return resp, r.index, nil
}

func (r *fakeRaft) setGate(g func(fsm.MessageType)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gate = g
}

// holdFirst holds the first entry of type mt in Raft until release is
// closed; entered is closed when it arrives. Later entries, of that type
// too, go through meanwhile.
func (r *fakeRaft) holdFirst(mt fsm.MessageType) (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var taken atomic.Bool
	r.setGate(func(t fsm.MessageType) {
		if t == mt && taken.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
	})
	return entered, release
}

func (r *fakeRaft) entries(t fsm.MessageType) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count[t]
}

// fakeClock is a Clock that moves only when told.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]bool
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	f  func()
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), timers: map[*fakeTimer]bool{}}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	if d <= 0 {
		go f()
		return t
	}
	c.timers[t] = true
	return t
}

// AfterFuncAt arms f at an instant (see evalbroker.AtClock): a timer
// armed while another goroutine advances the clock fires on time.
func (c *fakeClock) AfterFuncAt(at time.Time, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: at, f: f}
	if !at.After(c.now) {
		go f()
		return t
	}
	c.timers[t] = true
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	ok := t.c.timers[t]
	delete(t.c.timers, t)
	return ok
}

// pending returns how long until each armed timer fires, soonest first.
func (c *fakeClock) pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for t := range c.timers {
		out = append(out, t.at.Sub(c.now))
	}
	slices.Sort(out)
	return out
}

// Advance moves the clock and fires the timers that came due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	for t := range c.timers {
		if !t.at.After(c.now) {
			due = append(due, t)
			delete(c.timers, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		go t.f()
	}
}

// harness runs a Leader over a fake Raft and a fake clock.
type harness struct {
	t      testing.TB
	raft   *fakeRaft
	clock  *fakeClock
	leader *Leader
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

type harnessOpt func(*Config)

func newHarness(t testing.TB, opts ...harnessOpt) *harness {
	t.Helper()
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testWriter{t}})
	h := &harness{t: t, raft: newFakeRaft(logger), clock: newFakeClock()}
	cfg := Config{
		Raft: h.raft, State: h.raft.fsm.State, Logger: logger, Clock: h.clock,
		NumWorkers: 2, HeartbeatTTL: 10 * time.Second, HeartbeatGrace: 20 * time.Second,
	}
	for _, o := range opts {
		o(&cfg)
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.leader = l
	return h
}

// start runs the leader's services and waits until they are up.
func (h *harness) start() {
	h.t.Helper()
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.done = make(chan struct{})
	started := make(chan struct{})
	h.leader.onTermStart = func() { close(started) }
	go func() {
		defer close(h.done)
		h.leader.Run(h.ctx)
	}()
	select {
	case <-started:
	case <-time.After(testTimeout):
		h.t.Fatal("leader services did not start")
	}
	h.t.Cleanup(h.stop)
}

// stop ends the term and waits for Run to return.
func (h *harness) stop() {
	h.t.Helper()
	if h.cancel == nil {
		return
	}
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(testTimeout):
		h.t.Fatal("Run did not return after its context ended")
	}
}

func (h *harness) store() *state.Store { return h.raft.fsm.State() }

// waitFor waits until cond holds on the state, re-checking on every
// state change.
func (h *harness) waitFor(what string, cond func(s *state.Snapshot) bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for {
		snap := h.store().Snapshot()
		idx, err := snap.LatestIndex()
		if err != nil {
			h.t.Fatal(err)
		}
		if cond(snap) {
			return
		}
		_, _, _ = h.store().BlockingQuery(ctx, idx, 0, func(_ memdb.WatchSet, s *state.Snapshot) (any, uint64, error) {
			i, err := s.LatestIndex()
			return nil, i, err
		})
		if ctx.Err() != nil {
			h.t.Fatalf("timed out waiting for %s\n%s\nclock %v pending %v", what, h.dump(), h.clock.Now(), h.clock.pending())
		}
	}
}

// idle waits until every evaluation is terminal or blocked.
func (h *harness) idle() {
	h.t.Helper()
	h.waitFor("evaluations to settle", func(s *state.Snapshot) bool {
		evals, _ := s.Evals()
		for _, e := range evals {
			if !e.Terminal() && e.Status != structs.EvalStatusBlocked {
				return false
			}
		}
		return true
	})
}

func (h *harness) dump() string {
	var b strings.Builder
	snap := h.store().Snapshot()
	evals, _ := snap.Evals()
	for _, e := range evals {
		fmt.Fprintf(&b, "eval %s job=%s trig=%s status=%s %q idx=%d\n", e.ID, e.JobID, e.TriggeredBy, e.Status, e.StatusDescription, e.ModifyIndex)
	}
	allocs, _ := snap.Allocs()
	for _, a := range allocs {
		fmt.Fprintf(&b, "alloc %s %s node=%s v=%d desired=%s client=%s dep=%s\n", a.ID, a.Name, a.NodeID, a.JobVersion(), a.DesiredStatus, a.ClientStatus, a.DeploymentID)
	}
	deps, _ := snap.Deployments()
	for _, d := range deps {
		fmt.Fprintf(&b, "deployment %s v=%d %s %q\n", d.ID, d.JobVersion, d.Status, d.StatusDescription)
	}
	return b.String()
}

// leaked lists goroutines still running one of the leader's loops or
// background writes. (A goroutine that has signalled its end but not yet
// exited sits in a wrapper closure; it is not counted.)
func leaked() []string {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	loops := []string{
		"server.(*Leader).runWorker", "server.(*Leader).runFeeder", "server.(*Leader).runPlanApplier",
		"server.(*Leader).process", "server.(*Leader).apply(", "server.(*Leader).markNodeDown",
		"deployment.(*Watcher).Run", "evalbroker.(*Broker).Dequeue", "server.(*Leader).runDrainer",
	}
	var out []string
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		for _, l := range loops {
			if strings.Contains(g, l) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// node returns a ready node with the mock driver and the given CPU and
// memory.
func testNode(name string, cpu, mem int64) *structs.Node {
	return &structs.Node{
		ID: "node-" + name, Name: name, Datacenter: "dc1", NodePool: structs.DefaultNodePool,
		Attributes: map[string]string{"kernel.name": "linux", "unique.network.ip-address": "127.0.0.1"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: cpu},
			Memory: structs.NodeMemoryResources{MemoryMB: mem},
			Disk:   structs.NodeDiskResources{DiskMB: 100000},
		},
		Drivers: map[string]*structs.DriverInfo{
			structs.DriverMock: {Detected: true, Healthy: true},
		},
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusReady,
	}
}

// testJob returns a service job of one group "web" with count mock tasks
// of cpu MHz each, rolling one at a time.
func testJob(id string, count int, cpu int) *structs.Job {
	upd := structs.DefaultUpdateStrategy()
	upd.HealthCheck = structs.UpdateHealthCheckTaskStates
	return &structs.Job{
		Region: structs.DefaultRegion, Namespace: structs.DefaultNamespace, ID: id, Name: id,
		Type: structs.JobTypeService, Priority: 50, Datacenters: []string{"dc1"},
		TaskGroups: []*structs.TaskGroup{{
			Name: "web", Count: count,
			Tasks: []*structs.Task{{
				Name: "app", Driver: structs.DriverMock,
				Config:    map[string]any{"run_for": "1h"},
				Resources: &structs.Resources{CPU: cpu, MemoryMB: 64},
			}},
			RestartPolicy:    structs.DefaultRestartPolicy(structs.JobTypeService),
			ReschedulePolicy: structs.DefaultReschedulePolicy(structs.JobTypeService),
			EphemeralDisk:    &structs.EphemeralDisk{SizeMB: 10},
			Update:           upd.Copy(),
		}},
		Update: upd,
	}
}

// allocsOf returns the job's allocs that should run (desired run, client
// not finished).
func allocsOf(s *state.Snapshot, jobID string) []*structs.Allocation {
	all, _ := s.AllocsByJob(structs.DefaultNamespace, jobID)
	var out []*structs.Allocation
	for _, a := range all {
		if !a.TerminalStatus() {
			out = append(out, a)
		}
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
