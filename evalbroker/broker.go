package evalbroker

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/structs"
)

// Broker is the leader's queue of evaluations. It is safe for concurrent use.
// Its zero value is not usable; create one with New.
type Broker struct {
	cfg Config

	mu      sync.Mutex
	enabled bool
	seq     uint64
	entries map[string]*entry      // every tracked evaluation by ID
	slots   map[jobKey]string      // the evaluation out for each job
	pending map[jobKey]*entry      // the newest evaluation waiting per job
	ready   map[string]*readyQueue // ready evaluations by scheduler type
	delayed delayQueue             // delayed and retrying evaluations
	waiters []*waiter              // Dequeue calls waiting, oldest first
	unacked int                    // entries in phaseUnacked
	timer   delayTimer             // the one timer of the delay queue
	term    string                 // random per enabling: tokens never repeat
	tokens  uint64                 // tokens minted this term
}

// effects are callbacks gathered under the lock and run after it.
type effects struct {
	cancelled []*structs.Evaluation
	failed    []*structs.Evaluation
}

// Stats counts the evaluations in a Broker.
type Stats struct {
	// Ready evaluations wait for a worker; ReadyByType splits them by
	// scheduler type.
	Ready       int
	ReadyByType map[string]int
	// Unacked evaluations are out with a worker.
	Unacked int
	// Blocked evaluations wait for another evaluation of their job to
	// finish (at most one per job).
	Blocked int
	// Delayed evaluations wait for their WaitUntil or for a nack delay.
	Delayed int
	// Waiters counts Dequeue calls waiting for an evaluation.
	Waiters int
}

// New returns a disabled Broker; the leader enables it with SetEnabled.
func New(cfg Config) (*Broker, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	b := &Broker{cfg: cfg}
	b.resetLocked()
	return b, nil
}

// resetLocked drops all evaluations and stops all timers.
func (b *Broker) resetLocked() {
	for _, e := range b.entries {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	b.timer.stop()
	b.entries = make(map[string]*entry)
	b.slots = make(map[jobKey]string)
	b.pending = make(map[jobKey]*entry)
	b.ready = make(map[string]*readyQueue)
	b.delayed = nil
	b.waiters = nil
	b.unacked = 0
}

// SetEnabled turns the broker on when this server becomes leader and off
// when it stops being leader. Turning it off drops every evaluation without
// calling any callback, stops all timers, and makes waiting Dequeue calls
// return ErrDisabled. Tokens from before are void afterwards.
func (b *Broker) SetEnabled(enabled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.enabled == enabled {
		return
	}
	b.enabled = enabled
	if enabled {
		b.term = structs.GenerateUUID()
		return
	}
	waiters := b.waiters
	b.resetLocked()
	for _, w := range waiters {
		w.ch <- delivery{err: ErrDisabled}
	}
}

// Enabled reports whether the broker is on.
func (b *Broker) Enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabled
}

// checkEval rejects evaluations the broker cannot schedule.
func checkEval(e *structs.Evaluation) error {
	switch {
	case e == nil:
		return fmt.Errorf("%w: nil", ErrInvalidEval)
	case e.ID == "":
		return fmt.Errorf("%w: no ID", ErrInvalidEval)
	case e.Type == "":
		return fmt.Errorf("%w: %s has no scheduler type", ErrInvalidEval, e.ID)
	case e.Terminal():
		return fmt.Errorf("%w: %s is %s", ErrInvalidEval, e.ID, e.Status)
	}
	return nil
}

// Enqueue adds an evaluation. It is ready at once unless its WaitUntil (or
// enqueue time plus Wait) lies in the future, and waits if another
// evaluation of its job is out. Enqueueing an evaluation the broker already
// holds does nothing. The broker keeps the pointer and never modifies it.
func (b *Broker) Enqueue(eval *structs.Evaluation) error {
	if err := checkEval(eval); err != nil {
		return err
	}
	var fx effects
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return ErrDisabled
	}
	b.enqueueLocked(eval, b.cfg.Clock.Now(), &fx)
	b.mu.Unlock()
	b.run(fx)
	return nil
}

// Restore enqueues the pending evaluations read from state after this server
// gained leadership, oldest (by CreateIndex) first, so that for each job the
// newest waiting evaluation is kept. Terminal and blocked evaluations are
// skipped (blocked ones belong to Blocked); invalid ones are reported in the
// returned error while the rest are enqueued.
func (b *Broker) Restore(evals []*structs.Evaluation) error {
	var errs []error
	todo := make([]*structs.Evaluation, 0, len(evals))
	for _, e := range evals {
		if e != nil && (e.Terminal() || e.Status == structs.EvalStatusBlocked) {
			continue
		}
		if err := checkEval(e); err != nil {
			errs = append(errs, err)
			continue
		}
		todo = append(todo, e)
	}
	slices.SortStableFunc(todo, func(x, y *structs.Evaluation) int {
		return cmp.Compare(x.CreateIndex, y.CreateIndex)
	})
	var fx effects
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return ErrDisabled
	}
	now := b.cfg.Clock.Now()
	for _, e := range todo {
		b.enqueueLocked(e, now, &fx)
	}
	b.mu.Unlock()
	b.run(fx)
	return errors.Join(errs...)
}

// enqueueLocked tracks a new evaluation.
func (b *Broker) enqueueLocked(eval *structs.Evaluation, now time.Time, fx *effects) {
	if _, ok := b.entries[eval.ID]; ok {
		return
	}
	b.seq++
	e := &entry{eval: eval, seq: b.seq}
	b.entries[eval.ID] = e
	if at, later := readyAt(eval, now); later {
		e.phase = phaseDelayed
		e.at = at
		heap.Push(&b.delayed, e)
		b.armDelayLocked(now)
		return
	}
	b.admitLocked(e, fx)
}

// readyAt returns when an evaluation becomes ready and whether that is
// after now.
func readyAt(eval *structs.Evaluation, now time.Time) (time.Time, bool) {
	at := eval.WaitUntil
	if eval.Wait > 0 {
		if w := now.Add(eval.Wait); w.After(at) {
			at = w
		}
	}
	return at, at.After(now)
}

// admitLocked makes an entry ready if its job has no evaluation out, and
// otherwise keeps it as the job's pending evaluation if it is the newest.
func (b *Broker) admitLocked(e *entry, fx *effects) {
	key, ok := keyOf(e.eval)
	if !ok {
		b.readyLocked(e)
		return
	}
	if _, busy := b.slots[key]; !busy {
		b.slots[key] = e.eval.ID
		b.readyLocked(e)
		return
	}
	drop := e
	if p := b.pending[key]; p == nil || newer(e, p) {
		if p != nil {
			drop = p
		} else {
			drop = nil
		}
		e.phase = phasePending
		b.pending[key] = e
	}
	if drop != nil {
		delete(b.entries, drop.eval.ID)
		fx.cancelled = append(fx.cancelled, drop.eval)
	}
}

// readyLocked hands an entry holding its job's slot to the oldest waiting
// Dequeue that serves its type, or queues it.
func (b *Broker) readyLocked(e *entry) {
	e.phase = phaseReady
	if w := b.takeWaiterLocked(e.eval.Type); w != nil {
		token := b.deliverLocked(e)
		w.ch <- delivery{eval: e.eval, token: token}
		return
	}
	q := b.ready[e.eval.Type]
	if q == nil {
		q = new(readyQueue)
		b.ready[e.eval.Type] = q
	}
	if b.cfg.OnDequeue != nil {
		e.readySince = b.cfg.Clock.Now()
	}
	heap.Push(q, e)
}

// releaseLocked forgets an entry that is done (acked or failed) and lets
// its job's pending evaluation go.
func (b *Broker) releaseLocked(e *entry) {
	delete(b.entries, e.eval.ID)
	key, ok := keyOf(e.eval)
	if !ok || b.slots[key] != e.eval.ID {
		return
	}
	delete(b.slots, key)
	p := b.pending[key]
	if p == nil {
		return
	}
	delete(b.pending, key)
	b.slots[key] = p.eval.ID
	b.readyLocked(p)
}

// run calls the callbacks gathered under the lock.
func (b *Broker) run(fx effects) {
	if len(fx.cancelled) > 0 && b.cfg.OnCancel != nil {
		b.cfg.OnCancel(fx.cancelled)
	}
	if b.cfg.OnFailed != nil {
		for _, e := range fx.failed {
			b.cfg.OnFailed(e)
		}
	}
}

// Stats returns the broker's counts.
func (b *Broker) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Stats{
		ReadyByType: make(map[string]int, len(b.ready)),
		Unacked:     b.unacked,
		Blocked:     len(b.pending),
		Delayed:     len(b.delayed),
		Waiters:     len(b.waiters),
	}
	for typ, q := range b.ready {
		if n := q.Len(); n > 0 {
			s.ReadyByType[typ] = n
			s.Ready += n
		}
	}
	return s
}
