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

func newMembers(self structs.ServerMember) *members {
	return &members{
		self:   self,
		byID:   map[string]structs.ServerMember{self.ID: self},
		direct: map[string]bool{self.ID: true},
	}
}

// learnDirect records a member's own description of itself.
func (m *members) learnDirect(sm structs.ServerMember) {
	if sm.ID == "" || sm.ID == m.self.ID {
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
		if sm.ID == "" || sm.RaftAddr == "" || sm.HTTPAddr == "" || m.direct[sm.ID] {
			continue
		}
		m.byID[sm.ID] = sm
	}
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
