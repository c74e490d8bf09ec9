package httpapi

import (
	"context"
	"net/http"

	"github.com/droverhq/drover/acl"
)

// PUT|POST /v1/job/{id}/evaluate creates a new evaluation of a job, as
// Nomad's `job eval`: {"EvalID", "EvalCreateIndex", "JobModifyIndex",
// "Index"}. The body is optional, as Nomad's: {"JobID": id,
// "EvalOptions": {"ForceReschedule": bool}}, its JobID the path's;
// ForceReschedule also marks the job's failed allocations for rescheduling
// (those their group's reschedule policy allows and that were not
// replaced). 404 for an unknown job, 400 for a periodic or parameterized
// one (it runs nothing itself).

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/job/{id}/evaluate", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).jobEvaluate})
	}
}

// JobEvaluateBackend is how a server evaluates a job again
// (server.Leader.EvaluateJob): an unknown job wraps state.ErrNotFound,
// a job that cannot be evaluated is a 400.
type JobEvaluateBackend interface {
	EvaluateJob(ctx context.Context, namespace, jobID string, forceReschedule bool) (*JobRegisterResponse, error)
}

func (s *Server) jobEvaluate(w http.ResponseWriter, r *http.Request) (any, error) {
	eb, ok := s.backend.(JobEvaluateBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: job evaluation unavailable")
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	// The body is optional (nil without one); one that is sent names the job.
	var body *struct {
		JobID       string
		EvalOptions struct{ ForceReschedule bool }
	}
	if err := decodeOptionalBody(r, &body); err != nil {
		return nil, err
	}
	force := false
	if body != nil {
		switch {
		case body.JobID == "":
			return nil, Errorf(http.StatusBadRequest, "Job ID must be specified")
		case body.JobID != id:
			return nil, Errorf(http.StatusBadRequest, "JobID not same as job name")
		}
		force = body.EvalOptions.ForceReschedule
	}
	job, err := s.backend.State().Snapshot().JobByID(o.Namespace, id)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, errJobNotFound(id)
	}
	out, err := eb.EvaluateJob(r.Context(), o.Namespace, id, force)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, out.Index)
	return out, nil
}
