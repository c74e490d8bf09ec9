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
	if err := s.checkWritable(t); err != nil {
		return nil, 0, err
	}
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
	if err := s.checkWritable(t); err != nil {
		return func() (any, uint64, error) { return nil, 0, err }
	}
	data, err := fsm.Encode(t, req)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrEncode, err)
		return func() (any, uint64, error) { return nil, 0, err }
	}
	return s.EnqueueBytes(ctx, data)
}

// SetMinServerBuild sets how the server learns the lowest
// structs.ServerBuild among the servers of the Raft configuration (the
// agent knows their announcements). Apply and Enqueue then refuse, with
// fsm.ErrServersTooOld, an entry of a type a server does not know yet
// (fsm.CheckWritable). Without it every type is written.
func (s *Server) SetMinServerBuild(f func() int) { s.minBuild.Store(&f) }

// checkWritable applies SetMinServerBuild's gate to an entry of type t.
func (s *Server) checkWritable(t fsm.MessageType) error {
	f := s.minBuild.Load()
	if f == nil || fsm.TypeBuild(t) <= 1 {
		return nil
	}
	return fsm.CheckWritable(t, (*f)())
}
