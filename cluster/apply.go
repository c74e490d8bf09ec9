package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// defaultApplyTimeout bounds a write whose context has no deadline.
const defaultApplyTimeout = 30 * time.Second

// ApplyBytes appends one encoded entry to the replicated log, waits until
// it is committed and applied to the local state machine, and returns the
// state machine's response and the entry's index. See Apply for errors.
func (s *Server) ApplyBytes(ctx context.Context, data []byte) (any, uint64, error) {
	return s.EnqueueBytes(ctx, data)()
}

// EnqueueBytes hands one encoded entry to Raft and returns at once with a
// function that waits for it as ApplyBytes does. Entries enqueued one
// after the other by one goroutine are appended to the log in that order,
// so a caller can keep several entries in flight and still know their
// order. The wait function must be called (it releases a goroutine).
func (s *Server) EnqueueBytes(ctx context.Context, data []byte) func() (any, uint64, error) {
	timeout := defaultApplyTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
		if timeout <= 0 {
			err := fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())
			return func() (any, uint64, error) { return nil, 0, err }
		}
	}
	select {
	case <-s.shutdownCh:
		return func() (any, uint64, error) { return nil, 0, ErrShutdown }
	default:
	}
	enqueued := time.Now()
	f := s.raft.Apply(data, timeout)
	done := make(chan struct{})
	go func() {
		_ = f.Error()
		close(done)
	}()
	return func() (any, uint64, error) {
		// Raft's timeout bounds only the enqueueing; an entry enqueued just
		// as raft shuts down is never answered, hence the other cases.
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-done:
			resp, index, err := applyResult(f)
			if err != nil && f.Error() != nil {
				err = s.explain(err, enqueued)
			}
			return resp, index, err
		case <-ctx.Done():
			return nil, 0, fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())
		case <-s.shutdownCh:
			return nil, 0, ErrShutdown
		case <-timer.C:
			return nil, 0, fmt.Errorf("%w: no answer within %s", ErrTimeout, timeout)
		}
	}
}

// applyResult merges Raft's outcome with the state machine's: a Raft
// error is translated to this package's sentinels; a state machine
// response that is an error (a rejected request) is returned as the error,
// with the index it was rejected at.
func applyResult(f raft.ApplyFuture) (any, uint64, error) {
	if err := f.Error(); err != nil {
		return nil, 0, translate(err)
	}
	resp := f.Response()
	if err, ok := resp.(error); ok {
		return nil, f.Index(), err
	}
	return resp, f.Index(), nil
}
