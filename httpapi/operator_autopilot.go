package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/droverhq/drover/structs"
)

// The autopilot endpoints, as Nomad's:
//
//	GET /v1/operator/autopilot/configuration  the replicated configuration
//	PUT /v1/operator/autopilot/configuration  replace it (?cas=INDEX: only if
//	                                          its ModifyIndex is still INDEX);
//	                                          answers true or false
//	GET /v1/operator/autopilot/health         each server's health as the
//	                                          leader's autopilot sees it;
//	                                          429 when a server is unhealthy
//
// Bodies and answers are Nomad's api.AutopilotConfiguration and
// api.OperatorHealthReply (structs.AutopilotConfig, OperatorHealthReply).

func init() {
	register(
		route{"GET /v1/operator/autopilot/configuration", readRoute, operatorRead, (*Server).autopilotGetConfig},
		route{"PUT /v1/operator/autopilot/configuration", writeRoute, operatorWrite, (*Server).autopilotSetConfig},
		route{"GET /v1/operator/autopilot/health", readRoute, operatorRead, (*Server).autopilotHealth},
	)
}

// AutopilotBackend serves the autopilot endpoints.
type AutopilotBackend interface {
	// AutopilotConfiguration returns the replicated configuration.
	AutopilotConfiguration() (*structs.AutopilotConfig, error)
	// SetAutopilotConfiguration writes one through Raft (leader only) and
	// reports whether it did (false: a check-and-set lost).
	SetAutopilotConfiguration(ctx context.Context, req *structs.AutopilotSetConfigRequest) (bool, error)
	// AutopilotHealth is the leader's latest view of the servers.
	AutopilotHealth() (*structs.OperatorHealthReply, error)
}

func (s *Server) autopilotBackend() (AutopilotBackend, error) {
	b, ok := s.backend.(AutopilotBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: autopilot unavailable")
	}
	return b, nil
}

func (s *Server) autopilotGetConfig(_ http.ResponseWriter, _ *http.Request) (any, error) {
	b, err := s.autopilotBackend()
	if err != nil {
		return nil, err
	}
	return b.AutopilotConfiguration()
}

func (s *Server) autopilotSetConfig(_ http.ResponseWriter, r *http.Request) (any, error) {
	b, err := s.autopilotBackend()
	if err != nil {
		return nil, err
	}
	var c structs.AutopilotConfig
	if err := decodeBody(r, &c); err != nil {
		return nil, err
	}
	switch {
	case c.LastContactThreshold < 0, c.ServerStabilizationTime < 0:
		return nil, Errorf(http.StatusBadRequest, "LastContactThreshold and ServerStabilizationTime must not be negative")
	}
	req := &structs.AutopilotSetConfigRequest{Config: c}
	if v := r.URL.Query().Get("cas"); v != "" {
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, Errorf(http.StatusBadRequest, "invalid ?cas=%q: %w", v, err)
		}
		req.CAS, req.Config.ModifyIndex = true, idx
	}
	return b.SetAutopilotConfiguration(r.Context(), req)
}

func (s *Server) autopilotHealth(w http.ResponseWriter, _ *http.Request) (any, error) {
	b, err := s.autopilotBackend()
	if err != nil {
		return nil, err
	}
	h, err := b.AutopilotHealth()
	if err != nil {
		return nil, err
	}
	if !h.Healthy {
		// As Nomad: the body is the same, the status says "not healthy".
		writeJSON(w, http.StatusTooManyRequests, h)
		return written{}, nil
	}
	return h, nil
}
