package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/deployment/stateview"
	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Leader holds the leader's services. It is built once per server; Run
// starts the services for one leadership term. The node, allocation and
// job methods may be called at any time from any goroutine; those that
// need the term's services (heartbeats) answer ErrNotLeader between terms.
type Leader struct {
	cfg    Config
	raft   Raft
	logger hclog.Logger
	clock  Clock
	newID  func() string

	// cur is the running term, nil between terms.
	cur atomic.Pointer[term]
	// runMu serialises Run calls: a new term starts after the old one
	// has stopped.
	runMu sync.Mutex
	// onTermStart, when set (tests), is called once a term's services
	// are up.
	onTermStart func()
	// beforePlanCheck, when set (tests), sees each plan before the
	// applier checks it.
	beforePlanCheck func(*planSubmission)

	stats   counters
	clients clientBatcher
	// pool is the scheduler worker pool (workers.go).
	pool workerPool
	// memos keeps jobs' scheduling memos between passes (passmemo.go).
	memos passMemos
	// nodeTables keeps the passes' table of the nodes (nodetable.go).
	nodeTables nodeTables
	// memoPlans, when set (tests), sees each pass's plan from the memo
	// beside the full pass's plan of the same input (passmemo.go).
	memoPlans func(memo, full *scheduler.Plan, fromMemo bool)
	// dispatchMu serialises dispatches, so that a dispatch's idempotency
	// token is looked up after the previous dispatch is applied.
	dispatchMu sync.Mutex
}

// term is one leadership term's services. Everything in it is dropped
// when the term ends; the next term rebuilds it from state.
type term struct {
	ctx     context.Context
	broker  *evalbroker.Broker
	blocked *evalbroker.Blocked
	plans   chan *planSubmission
	beats   *heartbeats

	// mu guards closed; background goroutines started after the term's
	// setup (callbacks, timers) go through spawn so that stop can wait
	// for them.
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// spawn runs fn in a goroutine tracked by the term, unless the term is
// stopping.
func (t *term) spawn(fn func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		fn()
	}()
	return true
}

// New returns a Leader; cfg.Raft and cfg.State are required.
func New(cfg Config) (*Leader, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Leader{
		cfg: cfg, raft: cfg.Raft, logger: cfg.Logger.Named("leader"),
		clock: cfg.Clock, newID: cfg.NewID,
	}, nil
}

// Run runs the leader's services until ctx ends (leadership lost or
// shutdown), then stops them all and returns once every goroutine it
// started has finished. It is the function to register with the
// cluster's OnLeadership.
func (l *Leader) Run(ctx context.Context) {
	l.runMu.Lock()
	defer l.runMu.Unlock()
	if ctx.Err() != nil {
		return
	}
	t, err := l.newTerm(ctx)
	if err != nil {
		l.logger.Error("cannot start leader services", "error", err)
		return
	}
	l.logger.Info("leader services starting", "workers", l.poolConfig().NumSchedulers)
	t.broker.SetEnabled(true)
	t.blocked.SetEnabled(true)
	l.cur.Store(t)

	// Heartbeat timers are armed before the feeder runs: its first pass
	// arms a timer for any node that has none, with the plain TTL, and
	// must not race the term's first, longer arming.
	if err := t.beats.start(t); err != nil {
		l.logger.Error("cannot arm heartbeat timers", "error", err)
	}
	var loops sync.WaitGroup
	start := func(fn func()) {
		loops.Add(1)
		go func() {
			defer loops.Done()
			fn()
		}()
	}
	start(func() { l.runPlanApplier(t) })
	l.startWorkers(t)
	start(func() { l.watchSchedulerConfig(t) })
	start(func() { l.runFeeder(t) })
	start(func() { l.runDrainer(t) })
	start(func() { l.runVarLocks(t) })
	start(func() { l.runPeriodic(ctx) })
	start(func() { l.runACLTokenGC(t) })
	start(func() { l.runBrokerMetrics(t) })
	if l.cfg.Events != nil {
		start(func() { l.runRolloutMetrics(ctx) })
	}
	if w, err := l.newWatcher(); err != nil {
		l.logger.Error("cannot start deployment watcher", "error", err)
	} else {
		start(func() { _ = w.Run(ctx) })
	}
	if l.onTermStart != nil {
		l.onTermStart()
	}

	<-ctx.Done()
	l.cur.CompareAndSwap(t, nil)
	l.endWorkers(t)
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.beats.stopAll()
	t.broker.SetEnabled(false) // wakes waiting workers with ErrDisabled
	t.blocked.SetEnabled(false)
	loops.Wait()
	t.wg.Wait()
	l.logger.Info("leader services stopped")
}

func (l *Leader) newTerm(ctx context.Context) (*term, error) {
	t := &term{ctx: ctx, plans: make(chan *planSubmission)}
	bcfg := evalbroker.DefaultConfig()
	bcfg.Clock = brokerClock{l.clock}
	// Whether a worker is stuck is a question about this process's own
	// time, whatever clock the schedule runs on.
	bcfg.TimeoutClock = evalbroker.SystemClock{}
	bcfg.OnCancel = func(evals []*structs.Evaluation) {
		l.markEvals(t, evals, structs.EvalStatusCancelled, "superseded by a newer evaluation")
	}
	bcfg.OnFailed = func(e *structs.Evaluation) { l.evalFailed(t, e) }
	bcfg.OnDequeue = brokerWait
	b, err := evalbroker.New(bcfg)
	if err != nil {
		return nil, fmt.Errorf("eval broker: %w", err)
	}
	t.broker = b
	t.blocked = evalbroker.NewBlocked(b, func(evals []*structs.Evaluation) {
		l.markEvals(t, evals, structs.EvalStatusCancelled, "superseded by a newer blocked evaluation")
	})
	t.beats = newHeartbeats(l)
	return t, nil
}

func (l *Leader) newWatcher() (*deployment.Watcher, error) {
	return deployment.NewWatcher(deployment.Config{
		State:   stateview.New(l.cfg.State),
		Writer:  raftWriter{l},
		Clock:   watcherClock{l.clock},
		Logger:  l.logger.Named("deployments"),
		NewID:   l.newID,
		Measure: l.measureAnalysis,
	})
}

// Leading reports whether the leader's services are running.
func (l *Leader) Leading() bool {
	_, err := l.term()
	return err == nil
}

// term returns the running term or ErrNotLeader.
func (l *Leader) term() (*term, error) {
	if t := l.cur.Load(); t != nil && t.ctx.Err() == nil {
		return t, nil
	}
	return nil, ErrNotLeader
}

// store returns the current local store.
func (l *Leader) store() *state.Store { return l.cfg.State() }

// apply writes one entry.
func (l *Leader) apply(ctx context.Context, t fsm.MessageType, req any) (any, uint64, error) {
	resp, index, err := l.raft.Apply(ctx, t, req)
	if err != nil {
		return nil, index, fmt.Errorf("server: applying %s: %w", t, err)
	}
	return resp, index, nil
}
