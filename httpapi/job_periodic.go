package httpapi

import (
	"context"
	"net/http"

	"github.com/droverhq/drover/acl"
)

// PUT|POST /v1/job/{id}/periodic/force launches a periodic job's child now,
// whatever its schedule, as Nomad's: {"EvalID", "EvalCreateIndex",
// "Index"}. 400 for a job that is not periodic or is stopped, 404 for an
// unknown job.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/job/{id}/periodic/force", writeRoute, nsCap(acl.NamespaceCapabilityDispatchJob), (*Server).periodicForce})
	}
}

// PeriodicForceResponse answers a forced launch.
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	Index           uint64
}

// PeriodicBackend is how a server forces a periodic launch
// (server.Leader.ForcePeriodic).
type PeriodicBackend interface {
	ForcePeriodic(ctx context.Context, namespace, jobID string) (*PeriodicForceResponse, error)
}

func (s *Server) periodicForce(w http.ResponseWriter, r *http.Request) (any, error) {
	pb, ok := s.backend.(PeriodicBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: periodic launches unavailable")
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	out, err := pb.ForcePeriodic(r.Context(), o.Namespace, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	s.setMeta(w, out.Index)
	return out, nil
}
