package agent

import (
	"sort"
	"sync"

	"github.com/droverhq/drover/structs"
)

// members is what this server knows of the servers: Raft ID → member. It is
// the map the HTTP layer uses to find the leader's HTTP address.
type members struct {
	mu   sync.Mutex
	self structs.ServerMember
	byID map[string]structs.ServerMember
	// direct marks members heard from directly (their own announcement or
	// answer); second-hand entries never override them.
	direct map[string]bool
}

// newMembers returns the members known at start: this server, announcing
// this binary's structs.ServerBuild.
func newMembers(self structs.ServerMember) *members {
	self.Build = structs.ServerBuild
	return &members{
		self:   self,
		byID:   map[string]structs.ServerMember{self.ID: self},
		direct: map[string]bool{self.ID: true},
	}
}

// learnDirect records a member's own description of itself.
func (m *members) learnDirect(sm structs.ServerMember) {
	if sm.ID == "" || sm.ID == m.self.ID || m.foreign(sm) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byID[sm.ID] = sm
	m.direct[sm.ID] = true
}

// learnIndirect records members another server told us about, unless we
// know them first-hand.
func (m *members) learnIndirect(list []structs.ServerMember) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, sm := range list {
		if sm.ID == "" || sm.RaftAddr == "" || sm.HTTPAddr == "" || m.direct[sm.ID] || m.foreign(sm) {
			continue
		}
		m.byID[sm.ID] = sm
	}
}

// foreign reports whether sm is a server of another region: those are
// never members (peers of this region's Raft), only federated servers
// (agent/federation.go). A member naming no region is taken as this
// region's.
func (m *members) foreign(sm structs.ServerMember) bool {
	return sm.Region != "" && m.self.Region != "" && sm.Region != m.self.Region
}

func (m *members) get(id string) (structs.ServerMember, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sm, ok := m.byID[id]
	return sm, ok
}

// list returns every known member, self included, by ID.
func (m *members) list() []structs.ServerMember {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]structs.ServerMember, 0, len(m.byID))
	for _, sm := range m.byID {
		out = append(out, sm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// minBuild is the lowest build among the servers with these Raft IDs (each
// counted at least 1, see structs.EffectiveBuild), or 1 when one of them is
// not known yet: what every server of the configuration accepts.
func (m *members) minBuild(ids []string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	lowest := structs.ServerBuild
	for _, id := range ids {
		sm, ok := m.byID[id]
		if !ok {
			return 1
		}
		lowest = min(lowest, structs.EffectiveBuild(sm.Build))
	}
	return lowest
}
