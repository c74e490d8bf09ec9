// Package cluster runs drover's replicated log: it wraps hashicorp/raft
// behind a small API (Apply, leadership, membership) and keeps the rest of
// the servers free of Raft details.
//
// On disk a server keeps, under its data directory:
//
//	server-id          the server's Raft ID, a UUID minted on first start
//	raft/raft.db       log and stable store (raft-boltdb, bbolt)
//	raft/snapshots/    file snapshots of the state machine, the last two kept
//
// Writes go through Apply on the leader only; followers answer ErrNotLeader
// and the HTTP layer forwards writes to the leader. Services that must run on
// the leader alone (eval broker, plan applier, deployment watcher) register
// with OnLeadership and receive a context that is cancelled when leadership
// is lost.
package cluster

import "errors"

// Sentinel errors. Errors returned by this package wrap one of these (and,
// where there is one, the underlying raft error), so callers test them with
// errors.Is.
var (
	// ErrNotLeader: the write was sent to a server that is not the leader.
	// Nothing was written; forward the request to the leader.
	ErrNotLeader = errors.New("not the cluster leader")

	// ErrNoLeader: the cluster has no leader at the moment (election in
	// progress, or no quorum). The message is Nomad's.
	ErrNoLeader = errors.New("No cluster leader")

	// ErrLeadershipLost: leadership was lost after the write was enqueued
	// and before it was committed. The write may or may not be applied
	// eventually; the caller should read back before retrying.
	ErrLeadershipLost = errors.New("leadership lost while committing")

	// ErrTimeout: the write could not be enqueued, or the call's context
	// ended before it committed.
	ErrTimeout = errors.New("timed out waiting for the replicated log")

	// ErrShutdown: the server is shutting down or shut down.
	ErrShutdown = errors.New("raft is shut down")

	// ErrAlreadyBootstrapped: Bootstrap was called on a server that already
	// has Raft state. Nothing was changed.
	ErrAlreadyBootstrapped = errors.New("raft state already exists; not bootstrapping")

	// ErrEncode: the request could not be encoded into a log entry.
	ErrEncode = errors.New("encoding the log entry")
)
