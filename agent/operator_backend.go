package agent

import (
	"context"
	"fmt"
	"io"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// The server operator endpoints: remove-peer, snapshots and members. Each
// method serves one of httpapi's optional backends.

// RemoveRaftPeer removes a server from the Raft configuration by ID or,
// when id is empty, by Raft address (httpapi.RaftPeerBackend). Leader
// only: the route is a write, so followers forward it.
func (a *Agent) RemoveRaftPeer(_ context.Context, id, address string) error {
	peers, _, err := a.raft.Configuration()
	if err != nil {
		return err
	}
	for _, p := range peers {
		if (id != "" && p.ID == id) || (id == "" && p.Address == address) {
			a.logger.Info("removing server from the Raft configuration", "id", p.ID, "address", p.Address)
			return a.raft.RemoveServer(p.ID)
		}
	}
	if id != "" {
		return fmt.Errorf("%w: id %q", httpapi.ErrPeerNotFound, id)
	}
	return fmt.Errorf("%w: address %q", httpapi.ErrPeerNotFound, address)
}

// SaveSnapshot writes a snapshot archive of the local state
// (httpapi.SnapshotBackend).
func (a *Agent) SaveSnapshot(w io.Writer) (*cluster.SnapshotInfo, error) {
	return a.raft.SaveSnapshot(w)
}

// RestoreSnapshot restores an archive through Raft on every server
// (httpapi.SnapshotBackend).
func (a *Agent) RestoreSnapshot(r io.Reader) (*cluster.SnapshotInfo, error) {
	return a.raft.RestoreSnapshot(r)
}

// KnownServers lists the servers this agent knows, itself included
// (httpapi.ServerMembersBackend).
func (a *Agent) KnownServers() []structs.ServerMember { return a.members.list() }

var (
	_ httpapi.RaftPeerBackend      = (*Agent)(nil)
	_ httpapi.SnapshotBackend      = (*Agent)(nil)
	_ httpapi.ServerMembersBackend = (*Agent)(nil)
)
