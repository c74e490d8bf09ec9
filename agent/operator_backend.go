package agent

import (
	"context"
	"fmt"
	"io"
	"time"

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
			if p.ID == a.raft.ID() && a.raft.IsLeader() && a.otherVoters() {
				if err := a.handOverForRemoval(); err == nil {
					return httpapi.ErrHandedOver
				}
			}
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

// KnownServers lists the servers this agent knows, itself included, and
// those of the federated regions, as Nomad's WAN members
// (httpapi.ServerMembersBackend).
func (a *Agent) KnownServers() []structs.ServerMember {
	out := a.members.list()
	for _, region := range a.fed.Regions() {
		out = append(out, a.fed.Servers(region)...)
	}
	return out
}

var (
	_ httpapi.RaftPeerBackend      = (*Agent)(nil)
	_ httpapi.SnapshotBackend      = (*Agent)(nil)
	_ httpapi.ServerMembersBackend = (*Agent)(nil)
)

// handOverForRemoval moves this leader's leadership to another voter
// before it is removed from the Raft configuration (httpapi.ErrHandedOver):
// as at a shutdown (handOver), the writes it is serving finish first and
// those that arrive meanwhile go to the new leader.
func (a *Agent) handOverForRemoval() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer a.api.Stay()
	if err := a.api.LeaveFromWrite(ctx); err != nil {
		a.logger.Warn("handing the leadership over with writes still being served", "error", err)
	}
	id, err := a.raft.TransferLeadership(10 * time.Second)
	if err != nil {
		a.logger.Warn("the leadership could not be handed over before this server's removal; it removes itself", "error", err)
		return err
	}
	a.logger.Info("leadership handed over before this server's removal", "new_leader", id)
	return nil
}
