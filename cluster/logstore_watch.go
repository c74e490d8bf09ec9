package cluster

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// watchedLogStore notes the last time this server failed to write its
// Raft log (a full disk, an I/O error). Raft answers the entries of the
// batch it could not store with the store's error, steps down, and
// answers the entries queued behind them with "leadership lost": without
// the note a client would hear only the latter, with nothing to say the
// disk was the cause (explain).
type watchedLogStore struct {
	raft.LogStore

	mu  sync.Mutex
	err error
	at  time.Time
}

func (w *watchedLogStore) StoreLog(l *raft.Log) error { return w.note(w.LogStore.StoreLog(l)) }

func (w *watchedLogStore) StoreLogs(ls []*raft.Log) error { return w.note(w.LogStore.StoreLogs(ls)) }

// IsMonotonic passes on the wrapped store's answer (raft.MonotonicLogStore).
func (w *watchedLogStore) IsMonotonic() bool {
	m, ok := w.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

func (w *watchedLogStore) note(err error) error {
	if err != nil {
		w.mu.Lock()
		w.err, w.at = err, time.Now()
		w.mu.Unlock()
	}
	return err
}

// failedSince returns the last failure to write the log at or after t,
// or nil.
func (w *watchedLogStore) failedSince(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil || w.at.Before(t) {
		return nil
	}
	return w.err
}

// explain adds to err, the outcome of an entry enqueued at enqueued, that
// this server could not write its Raft log since, when it could not.
func (s *Server) explain(err error, enqueued time.Time) error {
	if err == nil || s.logs == nil {
		return err
	}
	cause := s.logs.failedSince(enqueued)
	if cause == nil {
		return err
	}
	if strings.Contains(err.Error(), cause.Error()) {
		return fmt.Errorf("this server could not write its Raft log: %w", err)
	}
	return fmt.Errorf("%w (this server could not write its Raft log: %v)", err, cause)
}
