package httpapi

import (
	"context"
	"errors"
	"io"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/structs"
)

// The operator endpoints for servers (remove-peer, snapshots, members)
// need more of the server than Backend gives; each is an optional
// interface the Backend may implement. A Backend that does not answers
// the endpoint with 501.

// ErrPeerNotFound: a remove-peer request names a server that is not in the
// Raft configuration (404).
var ErrPeerNotFound = errors.New("no server with that ID or address in the Raft configuration")

// RaftPeerBackend removes a server from the Raft configuration
// (DELETE /v1/operator/raft/peer).
type RaftPeerBackend interface {
	// RemoveRaftPeer removes the server with the given Raft ID, or, when
	// id is empty, the one at the given Raft address. Leader only. An
	// unknown server is an error wrapping ErrPeerNotFound.
	RemoveRaftPeer(ctx context.Context, id, address string) error
}

// SnapshotBackend saves and restores snapshots of the replicated state
// (GET and PUT /v1/operator/snapshot); cluster.Server implements both
// methods.
type SnapshotBackend interface {
	// SaveSnapshot writes a consistent snapshot archive of the local state
	// to w.
	SaveSnapshot(w io.Writer) (*cluster.SnapshotInfo, error)
	// RestoreSnapshot restores an archive through Raft so that every
	// server takes its state. Leader only.
	RestoreSnapshot(r io.Reader) (*cluster.SnapshotInfo, error)
}

// ServerMembersBackend lists the servers this agent knows of
// (GET /v1/agent/members), itself included.
type ServerMembersBackend interface {
	KnownServers() []structs.ServerMember
}
