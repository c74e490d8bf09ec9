package httpapi

import (
	"context"
	"net/http"
)

// Nomad's system endpoints:
//
//	PUT|POST /v1/system/gc                      the leader's reaper makes its passes at once, every
//	                                            age threshold taken as zero (agent/reaper.go), as
//	                                            Nomad's forced garbage collection
//	PUT|POST /v1/system/reconcile/summaries     nothing to do: drover's job summaries are kept by
//	                                            the writes that change them, in the same entry
//
// The scheduler configuration is operator_scheduler.go's.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/system/gc", writeRoute, management, (*Server).systemGC},
			route{m + " /v1/system/reconcile/summaries", writeRoute, management, (*Server).systemReconcileSummaries},
		)
	}
}

// GCBackend is the part of a backend that collects garbage at once:
// the agent's leader implements it (agent/system_gc.go).
type GCBackend interface {
	ForceGC(ctx context.Context) error
}

func (s *Server) systemGC(_ http.ResponseWriter, r *http.Request) (any, error) {
	gc, ok := s.backend.(GCBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: garbage collection unavailable")
	}
	if err := gc.ForceGC(r.Context()); err != nil {
		return nil, err
	}
	return nil, nil
}

func (s *Server) systemReconcileSummaries(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return nil, nil
}
