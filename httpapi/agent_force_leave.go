package httpapi

import (
	"net/http"
	"strconv"

	"github.com/droverhq/drover/structs"
)

// PUT|POST /v1/agent/force-leave?node=NAME[&prune=true] forces a server
// out of the cluster, as Nomad's (agent:write): served by the leader,
// which removes it from the Raft configuration and refuses its joins until
// it is joined again by address (agent/force_leave.go). node is the
// server's member name ("node-1.global"), node name or Raft ID; a name no
// server has is not an error. GET /v1/agent/members then lists it as
// "leaving" while it answers, "left" once it does not; with prune it is
// dropped from the list at once.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/agent/force-leave", writeRoute, agentWrite, (*Server).agentForceLeave})
	}
}

// ForceLeaveBackend forces servers out.
type ForceLeaveBackend interface {
	// ForceLeave forces out the server node names; prune also drops it
	// from the member list.
	ForceLeave(node string, prune bool) error
	// ForcedOut lists the servers forced out and not pruned.
	ForcedOut() []structs.ServerMember
}

// The statuses of a server forced out, as Nomad's gossip names them.
const (
	memberStatusLeaving = "leaving"
	memberStatusLeft    = "left"
)

func (s *Server) agentForceLeave(_ http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	node := q.Get("node")
	if node == "" {
		return nil, Errorf(http.StatusBadRequest, "node: the name of the server to force out is required (?node=)")
	}
	prune := false
	if v := q.Get("prune"); v != "" {
		p, err := strconv.ParseBool(v)
		if err != nil {
			return nil, Errorf(http.StatusBadRequest, "prune must be true or false (got %q)", v)
		}
		prune = p
	}
	b, ok := s.backend.(ForceLeaveBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "this agent runs no server that can force another out")
	}
	if err := b.ForceLeave(node, prune); err != nil {
		return nil, err
	}
	return nil, nil
}

// forcedOutMembers adds the servers forced out (and not pruned) to a
// member list, as "leaving" while their HTTP API answers, else "left".
func (s *Server) forcedOutMembers(r *http.Request, out *structs.ServerMembers, seen map[string]bool) {
	b, ok := s.backend.(ForceLeaveBackend)
	if !ok {
		return
	}
	client := s.probeClient()
	for _, m := range b.ForcedOut() {
		if seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		am := memberOf(m, false)
		am.Status = memberStatusLeft
		if m.HTTPAddr != "" && probe(r.Context(), client, s.agentScheme(), m.HTTPAddr) {
			am.Status = memberStatusLeaving
		}
		out.Members = append(out.Members, am)
	}
}
