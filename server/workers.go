package server

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/structs"
)

// The scheduler worker pool: the leader's workers, each dequeuing the
// evaluations of its enabled types and scheduling them one at a time
// (worker.go). As Nomad's /v1/agent/schedulers/config, the pool of a
// server is resized while it runs: a worker added starts at once, a worker
// removed stops dequeuing and finishes the evaluation it holds, so no
// evaluation is dropped. The setting belongs to this server (it is not
// replicated, as Nomad's): it applies while the server leads and from its
// next term on. Only the leader schedules in drover, so a follower's
// workers are listed as not started.
//
// While the replicated scheduler configuration sets PauseEvalBroker, every
// worker stops dequeuing (its status is Paused); evaluations wait in the
// broker until the pause ends.

// CoreScheduler is Nomad's "_core" scheduler type, which every pool must
// enable. Drover's garbage collection runs on the leader's reaper, not as
// evaluations, so no worker dequeues it.
const CoreScheduler = "_core"

// ErrInvalidWorkerPool: a worker pool configuration Nomad's servers
// refuse (Nomad's HTTP answer is a bare "Invalid request").
var ErrInvalidWorkerPool = errors.New("invalid scheduler worker pool configuration")

// WorkerPoolConfig is the scheduler worker pool of a server, in Nomad's
// terms.
type WorkerPoolConfig struct {
	NumSchedulers     int
	EnabledSchedulers []string
}

// Validate checks c as Nomad's servers do: 0 to runtime.NumCPU()
// workers, "_core" enabled, and only the built-in scheduler types.
func (c WorkerPoolConfig) Validate() error {
	if c.NumSchedulers < 0 || c.NumSchedulers > runtime.NumCPU() {
		return fmt.Errorf("%w: NumSchedulers must be from 0 to %d (the CPUs), got %d", ErrInvalidWorkerPool, runtime.NumCPU(), c.NumSchedulers)
	}
	core := false
	for _, s := range c.EnabledSchedulers {
		switch s {
		case CoreScheduler:
			core = true
		case structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch:
		default:
			return fmt.Errorf("%w: unknown scheduler %q in EnabledSchedulers", ErrInvalidWorkerPool, s)
		}
	}
	if !core {
		return fmt.Errorf("%w: EnabledSchedulers must include %q", ErrInvalidWorkerPool, CoreScheduler)
	}
	return nil
}

// WorkerInfo is one worker, as Nomad's /v1/agent/schedulers lists it.
type WorkerInfo struct {
	ID                string
	EnabledSchedulers []string
	Started           time.Time
	// Status is Started, Paused (PauseEvalBroker) or, on a server that
	// does not lead, NotStarted.
	Status string
	// WorkloadStatus is WaitingToDequeue, Scheduling or Paused.
	WorkloadStatus string
}

// worker is one running worker of a term.
type worker struct {
	id      string
	types   []string // the evaluation types it dequeues
	started time.Time
	ctx     context.Context // ends when the worker is removed
	cancel  context.CancelFunc
	busy    atomic.Bool
}

// workerPool is the pool's setting and the current term's workers.
type workerPool struct {
	mu      sync.Mutex
	set     bool // cfg was set (else the Config's NumWorkers and types)
	cfg     WorkerPoolConfig
	paused  bool
	term    *term
	workers []*worker
	next    int
}

// poolConfig is the pool's setting.
func (l *Leader) poolConfig() WorkerPoolConfig {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	return l.poolConfigLocked()
}

func (l *Leader) poolConfigLocked() WorkerPoolConfig {
	if l.pool.set {
		return WorkerPoolConfig{NumSchedulers: l.pool.cfg.NumSchedulers, EnabledSchedulers: slices.Clone(l.pool.cfg.EnabledSchedulers)}
	}
	return WorkerPoolConfig{NumSchedulers: l.cfg.NumWorkers, EnabledSchedulers: append(slices.Clone(l.cfg.SchedulerTypes), CoreScheduler)}
}

// SchedulerWorkerConfig is the worker pool's setting.
func (l *Leader) SchedulerWorkerConfig() WorkerPoolConfig { return l.poolConfig() }

// SetSchedulerWorkerConfig sets the worker pool and, while this server
// leads, resizes the running pool to it; it returns the setting now in
// force. An invalid c is ErrInvalidWorkerPool.
func (l *Leader) SetSchedulerWorkerConfig(c WorkerPoolConfig) (WorkerPoolConfig, error) {
	if err := c.Validate(); err != nil {
		return l.poolConfig(), err
	}
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	l.pool.set = true
	l.pool.cfg = WorkerPoolConfig{NumSchedulers: c.NumSchedulers, EnabledSchedulers: slices.Clone(c.EnabledSchedulers)}
	// Workers of other types are replaced: stop them all, start anew.
	l.stopWorkersLocked(0)
	l.resizeLocked()
	return l.poolConfigLocked(), nil
}

// SchedulerWorkersInfo lists the workers: the running ones while this
// server leads, else the setting's, not started.
func (l *Leader) SchedulerWorkersInfo() []WorkerInfo {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	cfg := l.poolConfigLocked()
	if l.pool.term == nil || l.pool.paused {
		status, workload := "NotStarted", "NotStarted"
		if l.pool.term != nil {
			status, workload = "Paused", "Paused"
		}
		out := make([]WorkerInfo, cfg.NumSchedulers)
		for i := range out {
			out[i] = WorkerInfo{ID: strconv.Itoa(i), EnabledSchedulers: slices.Clone(cfg.EnabledSchedulers), Status: status, WorkloadStatus: workload}
		}
		return out
	}
	out := make([]WorkerInfo, 0, len(l.pool.workers))
	for _, w := range l.pool.workers {
		workload := "WaitingToDequeue"
		if w.busy.Load() {
			workload = "Scheduling"
		}
		out = append(out, WorkerInfo{ID: w.id, EnabledSchedulers: slices.Clone(cfg.EnabledSchedulers), Started: w.started,
			Status: "Started", WorkloadStatus: workload})
	}
	return out
}

// startWorkers starts the pool for term t.
func (l *Leader) startWorkers(t *term) {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	l.pool.term = t
	l.resizeLocked()
}

// endWorkers forgets the ended term's workers (they stop with its
// context; Run waits for them).
func (l *Leader) endWorkers(t *term) {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	if l.pool.term == t {
		l.stopWorkersLocked(0)
		l.pool.term = nil
	}
}

// setPaused pauses or resumes every worker (PauseEvalBroker).
func (l *Leader) setPaused(paused bool) {
	l.pool.mu.Lock()
	defer l.pool.mu.Unlock()
	if l.pool.paused == paused {
		return
	}
	l.pool.paused = paused
	if paused {
		l.logger.Info("scheduler configuration pauses the eval broker: the workers stop dequeuing")
	} else {
		l.logger.Info("scheduler configuration resumes the eval broker")
	}
	l.resizeLocked()
}

// resizeLocked starts or stops workers until the term runs as many as
// the setting says (none while paused).
func (l *Leader) resizeLocked() {
	t := l.pool.term
	if t == nil {
		return
	}
	cfg := l.poolConfigLocked()
	want := cfg.NumSchedulers
	if l.pool.paused {
		want = 0
	}
	l.stopWorkersLocked(want)
	var types []string
	for _, s := range cfg.EnabledSchedulers {
		if s != CoreScheduler {
			types = append(types, s)
		}
	}
	for len(l.pool.workers) < want {
		ctx, cancel := context.WithCancel(t.ctx)
		w := &worker{id: strconv.Itoa(l.pool.next), types: types, started: time.Now(), ctx: ctx, cancel: cancel}
		l.pool.next++
		if len(types) == 0 {
			// Only _core: nothing of drover's to dequeue; the worker
			// is listed and waits for its end.
			l.pool.workers = append(l.pool.workers, w)
			continue
		}
		if !t.spawn(func() { l.runWorker(t, w) }) {
			cancel()
			return
		}
		l.pool.workers = append(l.pool.workers, w)
	}
}

// stopWorkersLocked stops the workers beyond the first keep.
func (l *Leader) stopWorkersLocked(keep int) {
	for len(l.pool.workers) > keep {
		last := len(l.pool.workers) - 1
		l.pool.workers[last].cancel()
		l.pool.workers = l.pool.workers[:last]
	}
}

// watchSchedulerConfig pauses and resumes the workers as the replicated
// scheduler configuration's PauseEvalBroker says, until the term ends.
func (l *Leader) watchSchedulerConfig(t *term) {
	for {
		ws := memdb.NewWatchSet()
		store := l.store()
		ws.Add(store.AbandonCh())
		c, err := store.Snapshot().WithWatch(ws).EffectiveSchedulerConfig()
		if err != nil {
			l.logger.Error("reading the scheduler configuration", "error", err)
		} else {
			l.setPaused(c.PauseEvalBroker)
		}
		if err := ws.WatchCtx(t.ctx); err != nil {
			return
		}
	}
}
