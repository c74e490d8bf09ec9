package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/structs"
)

func init() {
	register(
		route{"GET /v1/agent/self", localRoute, agentReadOrServer, (*Server).agentSelf},
		route{"GET /v1/agent/health", localRoute, public, (*Server).agentHealth},
		route{"POST /v1/internal/join", localRoute, serverJoin, (*Server).internalJoin},
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
// The join must prove it comes from a server of the cluster (checkJoin)
// before anything of it is used.
func (s *Server) internalJoin(w http.ResponseWriter, r *http.Request) (any, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if statusFor(err) == http.StatusRequestEntityTooLarge {
			return nil, Errorf(http.StatusRequestEntityTooLarge, "request body too large: %w", err)
		}
		return nil, Errorf(http.StatusBadRequest, "reading the request body: %w", err)
	}
	if err := s.checkJoin(r, body); err != nil {
		if s.refusedJoins.first(r.RemoteAddr, s.now()) {
			s.logger.Warn("join refused (logged once a minute per address)", "remote", r.RemoteAddr, "error", err)
		}
		return nil, err
	}
	var req structs.ServerJoinRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, Errorf(http.StatusBadRequest, "malformed request body: %w", err)
	}
	if req.Self.ID == "" || req.Self.RaftAddr == "" || req.Self.HTTPAddr == "" {
		return nil, Errorf(http.StatusBadRequest, "join request without ID, RaftAddr or HTTPAddr")
	}
	if pr := r.Header.Get(PeerRegionHeader); pr != "" && req.Self.Region != pr {
		// A server of another region joins as a server of its own
		// region only (regions.go).
		return nil, Errorf(http.StatusForbidden, "join refused: the caller's certificate is of a server of region %q, the join names region %q: %w",
			pr, req.Self.Region, ErrForbidden)
	}
	resp, err := s.backend.Join(r.Context(), &req)
	if err != nil || s.access.JoinToken == "" {
		return resp, err
	}
	// Sign the answer, bound to the request, so that the joining server
	// can trust the members and bootstrap facts it holds.
	out, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("encoding the join answer: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(joinauth.Header, joinauth.SignResponse(s.access.JoinToken, r.Header.Get(joinauth.Header), out))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return written{}, nil
}
