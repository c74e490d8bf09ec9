package httpapi

import "net/http"

// GET /v1/metrics serves the agent's metrics (package telemetry): Nomad's
// JSON MetricsSummary, or the Prometheus text format with
// ?format=prometheus. Public, as Nomad's: a Prometheus scraper sends no
// token, and no figure names an object (labels take bounded values only).

func init() {
	register(route{"GET /v1/metrics", localRoute, public, (*Server).metricsRoute})
}

// WithMetrics serves /v1/metrics with h (telemetry.Telemetry.Handler).
func WithMetrics(h http.Handler) Option { return func(s *Server) { s.metrics = h } }

func (s *Server) metricsRoute(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.metrics == nil {
		return nil, Errorf(http.StatusNotImplemented, "metrics are not enabled on this agent")
	}
	s.metrics.ServeHTTP(w, r)
	return written{}, nil
}
