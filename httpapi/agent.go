package httpapi

import (
	"net/http"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/structs"
)

func init() {
	register(
		route{"GET /v1/agent/self", localRoute, (*Server).agentSelf},
		route{"GET /v1/agent/health", localRoute, (*Server).agentHealth},
		route{"POST /v1/internal/join", localRoute, (*Server).internalJoin},
	)
}

func (s *Server) agentSelf(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return s.backend.Self(), nil
}

// healthStatus is one part of Nomad's agent health answer.
type healthStatus struct {
	Ok      bool   `json:"ok"`
	Message string `json:"message"`
}

// agentHealth answers {"server":{"ok":…,"message":…}}; 500 when this
// server knows no leader, as Nomad.
func (s *Server) agentHealth(w http.ResponseWriter, _ *http.Request) (any, error) {
	if addr, _ := s.backend.Leader(); addr == "" {
		writeJSON(w, http.StatusInternalServerError, map[string]healthStatus{
			"server": {Ok: false, Message: cluster.ErrNoLeader.Error()},
		})
		return written{}, nil
	}
	return map[string]healthStatus{"server": {Ok: true, Message: "ok"}}, nil
}

// internalJoin is the server discovery exchange (see the package doc).
func (s *Server) internalJoin(_ http.ResponseWriter, r *http.Request) (any, error) {
	var req structs.ServerJoinRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.Self.ID == "" || req.Self.RaftAddr == "" || req.Self.HTTPAddr == "" {
		return nil, Errorf(http.StatusBadRequest, "join request without ID, RaftAddr or HTTPAddr")
	}
	return s.backend.Join(r.Context(), &req)
}
