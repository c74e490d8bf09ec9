package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultBufferSize is how many log entries' events a Buffer keeps:
// Nomad's server.event_buffer_size.
const DefaultBufferSize = 100

// DefaultNamespace is the namespace of a subscription that names none.
const DefaultNamespace = "default"

// Errors of a subscription.
var (
	// ErrSubscriberBehind: the subscriber's next entry was overwritten
	// before it read it (it reads slower than the state changes). It may
	// subscribe again from the index it got to; what it missed is gone.
	ErrSubscriberBehind = errors.New("event stream: subscriber fell behind the event buffer and was dropped; subscribe again")
	// ErrBufferReset: the state was replaced by a snapshot restore, so the
	// events before it no longer describe the state; subscribe again.
	ErrBufferReset = errors.New("event stream: state restored from a snapshot; subscribe again")
	// ErrClosed: the subscription was closed.
	ErrClosed = errors.New("event stream: subscription closed")
)

// Buffer is a ring of the events of the latest log entries. Publish is
// called by one goroutine (the FSM's) and never blocks on readers; any
// number of subscriptions read concurrently.
type Buffer struct {
	mu sync.Mutex
	// ring holds the batches of sequence numbers [first, next), the batch
	// of sequence s at ring[s % len(ring)].
	ring        []*Batch
	first, next uint64
	// gen counts resets; a subscription of an older generation is over.
	gen uint64
	// wake is closed (and replaced) on every publish and reset.
	wake chan struct{}

	published   atomic.Uint64
	dropped     atomic.Uint64
	subscribers atomic.Int64
}

// NewBuffer returns a Buffer keeping the events of the latest size log
// entries (DefaultBufferSize when size < 1).
func NewBuffer(size int) *Buffer {
	if size < 1 {
		size = DefaultBufferSize
	}
	return &Buffer{ring: make([]*Batch, size), wake: make(chan struct{})}
}

// Size is the number of entries the buffer keeps.
func (b *Buffer) Size() int { return len(b.ring) }

// Publish appends the events of the entry at index, overwriting the
// oldest entry when the ring is full. Indexes must grow from one call to
// the next (the FSM applies entries in order). An entry without events
// is not kept. The buffer takes the events: the caller must not change
// them afterwards.
func (b *Buffer) Publish(index uint64, events []*Event) {
	if len(events) == 0 {
		return
	}
	batch := &Batch{Index: index, Events: events}
	for _, e := range events {
		e.Index = index
		e.enc = &encoded{}
	}
	b.mu.Lock()
	b.ring[b.next%uint64(len(b.ring))] = batch
	b.next++
	if b.next-b.first > uint64(len(b.ring)) {
		b.first = b.next - uint64(len(b.ring))
	}
	wake := b.wake
	b.wake = make(chan struct{})
	b.mu.Unlock()
	close(wake)
	b.published.Add(uint64(len(events)))
}

// Reset forgets every entry and ends every subscription with
// ErrBufferReset; the FSM calls it when it restores a snapshot.
func (b *Buffer) Reset() {
	b.mu.Lock()
	clear(b.ring)
	b.first = b.next
	b.gen++
	wake := b.wake
	b.wake = make(chan struct{})
	b.mu.Unlock()
	close(wake)
}

// Stats are a buffer's figures, for metrics.
type Stats struct {
	// Published counts the events published since the buffer was made.
	Published uint64
	// Dropped counts the subscriptions dropped for falling behind.
	Dropped uint64
	// Subscribers is the number of open subscriptions.
	Subscribers int64
	// Entries is the number of entries kept; LastIndex the newest one's
	// index (0 when none).
	Entries   int
	LastIndex uint64
}

// Stats returns the buffer's figures.
func (b *Buffer) Stats() Stats {
	b.mu.Lock()
	n := int(b.next - b.first)
	var last uint64
	if n > 0 {
		last = b.ring[(b.next-1)%uint64(len(b.ring))].Index
	}
	b.mu.Unlock()
	return Stats{Published: b.published.Load(), Dropped: b.dropped.Load(),
		Subscribers: b.subscribers.Load(), Entries: n, LastIndex: last}
}

// SubscribeRequest says what a subscription receives.
type SubscribeRequest struct {
	// Topics maps each topic subscribed to (TopicAll for every one) to
	// the keys to match: an event matches a key equal to its Key or to one
	// of its FilterKeys; "*" or no keys matches every event of the topic.
	Topics map[Topic][]string
	// Namespace is the namespace of the events received ("*": every
	// namespace, "": DefaultNamespace); events without a namespace (nodes)
	// always match.
	Namespace string
	// Index starts the subscription at the first entry of index at least
	// Index (at the oldest kept entry when Index is older than every one);
	// 0 starts at the oldest kept entry.
	Index uint64
	// Allow, when set, is asked about every event that matches: the HTTP
	// API filters by what the caller's token may read.
	Allow func(*Event) bool
}

// Subscription reads a Buffer from one position.
type Subscription struct {
	b    *Buffer
	req  SubscribeRequest
	gen  uint64
	next uint64 // the sequence number of the next batch to read
	// behind is set once the subscription fell behind (under b.mu).
	behind bool

	closeOnce sync.Once
	closed    chan struct{}
}

// Subscribe starts a subscription; Close it when done.
func (b *Buffer) Subscribe(req SubscribeRequest) *Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &Subscription{b: b, req: req, gen: b.gen, next: b.first, closed: make(chan struct{})}
	if req.Index > 0 {
		// The ring is in index order: skip the entries before Index.
		for s.next < b.next && b.ring[s.next%uint64(len(b.ring))].Index < req.Index {
			s.next++
		}
	}
	b.subscribers.Add(1)
	return s
}

// Close ends the subscription; a Next waiting returns ErrClosed.
func (s *Subscription) Close() {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.b.subscribers.Add(-1)
	})
}

// Next returns the next entry's events that the subscription matches,
// waiting for one when there is none yet. Entries whose events all fail
// to match are skipped. It fails with ErrSubscriberBehind once the
// subscription's next entry has been overwritten, ErrBufferReset after a
// Reset, ErrClosed after Close, or ctx's error.
func (s *Subscription) Next(ctx context.Context) (*Batch, error) {
	for {
		batch, wake, err := s.take()
		if err != nil {
			return nil, err
		}
		if batch != nil {
			if batch.Index < s.req.Index {
				continue
			}
			if out := s.filter(batch); out != nil {
				return out, nil
			}
			continue
		}
		select {
		case <-wake:
		case <-s.closed:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("event stream: %w", ctx.Err())
		}
	}
}

// take returns the next batch, or the channel to wait on when there is
// none yet.
func (s *Subscription) take() (*Batch, <-chan struct{}, error) {
	select {
	case <-s.closed:
		return nil, nil, ErrClosed
	default:
	}
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case s.gen != b.gen:
		return nil, nil, ErrBufferReset
	case s.behind || s.next < b.first:
		if !s.behind {
			s.behind = true // count the drop once
			b.dropped.Add(1)
		}
		return nil, nil, ErrSubscriberBehind
	case s.next < b.next:
		batch := b.ring[s.next%uint64(len(b.ring))]
		s.next++
		return batch, nil, nil
	}
	return nil, b.wake, nil
}

// filter returns the events of batch the subscription matches, nil when
// none.
func (s *Subscription) filter(batch *Batch) *Batch {
	all := true
	var out []*Event
	for i, e := range batch.Events {
		if s.matches(e) {
			if !all {
				out = append(out, e)
			}
			continue
		}
		if all {
			all = false
			out = append(make([]*Event, 0, len(batch.Events)), batch.Events[:i]...)
		}
	}
	switch {
	case all:
		return batch
	case len(out) == 0:
		return nil
	}
	return &Batch{Index: batch.Index, Events: out}
}

// matches reports whether the subscription receives e.
func (s *Subscription) matches(e *Event) bool {
	ns := s.req.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	if ns != "*" && e.Namespace != "" && e.Namespace != ns {
		return false
	}
	keys, ok := s.req.Topics[e.Topic]
	if !ok || !matchKeys(keys, e) {
		all, ok := s.req.Topics[TopicAll]
		if !ok || !matchKeys(all, e) {
			return false
		}
	}
	return s.req.Allow == nil || s.req.Allow(e)
}

func matchKeys(keys []string, e *Event) bool {
	if len(keys) == 0 {
		return true
	}
	for _, k := range keys {
		if k == "*" || k == e.Key || slices.Contains(e.FilterKeys, k) {
			return true
		}
	}
	return false
}
