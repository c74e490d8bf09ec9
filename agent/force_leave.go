package agent

import (
	"net/http"
	"sync"

	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// Nomad's force-leave (PUT /v1/agent/force-leave?node=NAME&prune=…,
// drover server force-leave). Drover's servers do not gossip, so the
// leader, which serves it, does what Nomad's leader does when gossip says
// a server left: it removes the server from the Raft configuration. It
// also forgets the server as a member, so that this server stops
// exchanging with it, and refuses its joins from then on, so that a
// server still running is not added back. The server stays listed by
// GET /v1/agent/members with status "leaving" while it still answers,
// "left" once it does not, unless prune drops it from the list at once.
// Joining it again by address (drover server join, POST /v1/agent/join)
// lets it back. The record is this server's own: another leader elected
// later has none.

// forceLeft is the servers this one forced out, by Raft ID.
type forceLeft struct {
	mu   sync.Mutex
	byID map[string]forcedServer
}

type forcedServer struct {
	member structs.ServerMember
	pruned bool
}

func (f *forceLeft) add(m structs.ServerMember, prune bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byID == nil {
		f.byID = map[string]forcedServer{}
	}
	f.byID[m.ID] = forcedServer{member: m, pruned: prune}
}

func (f *forceLeft) has(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.byID[id]
	return ok
}

func (f *forceLeft) clear(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.byID, id)
}

// listed are the forced servers not pruned.
func (f *forceLeft) listed() []structs.ServerMember {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []structs.ServerMember
	for _, s := range f.byID {
		if !s.pruned {
			out = append(out, s.member)
		}
	}
	return out
}

// forget drops a member from this server's list.
func (m *members) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byID, id)
	delete(m.direct, id)
}

// ForceLeave forces the server named node out (httpapi.ForceLeaveBackend):
// node is its member name ("node-1.global"), node name or Raft ID. A name
// no server has is not an error, as Nomad's; this server itself is
// refused.
func (a *Agent) ForceLeave(node string, prune bool) error {
	if a.raft == nil {
		return httpapi.Errorf(http.StatusBadRequest, "this agent runs no server")
	}
	var target *structs.ServerMember
	for _, m := range append(a.members.list(), a.left.listed()...) {
		if m.ID == node || m.Name == node || m.Name+"."+m.Region == node || (m.Region == "" && m.Name+"."+a.cfg.Region == node) {
			target = &m
			break
		}
	}
	if target == nil {
		// A server of the Raft configuration this server has no member
		// record of, named by its Raft ID.
		if peers, _, err := a.raft.Configuration(); err == nil {
			for _, p := range peers {
				if p.ID == node {
					target = &structs.ServerMember{ID: p.ID, Name: p.ID, RaftAddr: p.Address, Region: a.cfg.Region}
					break
				}
			}
		}
	}
	if target == nil {
		a.logger.Info("force-leave of a server this one does not know: nothing to do", "node", node)
		return nil
	}
	if target.ID == a.raft.ID() {
		return httpapi.Errorf(http.StatusBadRequest, "%s is this server: a server cannot force itself out (stop it, or force it out from another server)", node)
	}
	a.left.add(*target, prune)
	a.members.forget(target.ID)
	peers, _, err := a.raft.Configuration()
	if err != nil {
		return err
	}
	for _, p := range peers {
		if p.ID == target.ID {
			a.logger.Info("force-leave: removing the server from the Raft configuration", "id", p.ID, "name", target.Name)
			if err := a.raft.RemoveServer(p.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// ForcedOut lists the servers forced out and not pruned
// (httpapi.ForceLeaveBackend).
func (a *Agent) ForcedOut() []structs.ServerMember { return a.left.listed() }

// checkForceLeft refuses the join of a server this one forced out.
func (a *Agent) checkForceLeft(self structs.ServerMember) error {
	if !a.left.has(self.ID) {
		return nil
	}
	return httpapi.Errorf(http.StatusForbidden, "server %s was forced to leave (force-leave): join it again by address (drover server join %s)", self.Name, self.HTTPAddr)
}
