package cluster

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/fsm"
)

// Apply encodes req as a log entry of type t, appends it to the replicated
// log, waits until the local state machine has applied it, and returns the
// state machine's response and the entry's index. Leader only.
//
// Errors: ErrEncode (nothing written); ErrNotLeader; ErrLeadershipLost
// (outcome unknown); ErrTimeout; ErrShutdown; or the state machine's own
// error when it rejected the request (see fsm.FSM.Apply), returned with the
// entry's index.
func (s *Server) Apply(ctx context.Context, t fsm.MessageType, req any) (any, uint64, error) {
	data, err := fsm.Encode(t, req)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrEncode, err)
	}
	return s.ApplyBytes(ctx, data)
}

// Enqueue encodes req as a log entry of type t and hands it to Raft
// without waiting; the returned function waits for it as Apply does. See
// EnqueueBytes for the order of entries.
func (s *Server) Enqueue(ctx context.Context, t fsm.MessageType, req any) func() (any, uint64, error) {
	data, err := fsm.Encode(t, req)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrEncode, err)
		return func() (any, uint64, error) { return nil, 0, err }
	}
	return s.EnqueueBytes(ctx, data)
}
