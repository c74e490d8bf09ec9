package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/structs"
)

// DELETE /v1/job/{id}[?purge=true][&eval_priority=N][&global=true] stops a job (a new, stopped version) or,
// with purge, deletes it and its history; with global, a multi-region job
// is stopped in every region it names (multiregion_register.go). The leader stamps the
// job-deregister evaluation and writes both in one entry; the answer is
// Nomad's JobDeregisterResponse. An unknown job is, as Nomad's, a success
// that writes nothing (no evaluation, index 0).

func init() {
	register(route{"DELETE /v1/job/{id}", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).jobDeregister})
}

// JobDeregisterBackend is what DELETE /v1/job/{id} needs beyond Backend:
// the leader's job deregistration (server.Leader.DeregisterJob). A Backend
// that does not implement it answers 501.
type JobDeregisterBackend interface {
	// DeregisterJob stops the job, or purges it, with a job-deregister
	// evaluation, in one replicated write.
	DeregisterJob(ctx context.Context, namespace, jobID string, purge bool) (*JobDeregisterResponse, error)
}

// JobDeregisterResponse is the answer of DELETE /v1/job/{id}, in Nomad's
// shape.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Index           uint64
}

func (s *Server) jobDeregister(w http.ResponseWriter, r *http.Request) (any, error) {
	db, ok := s.backend.(JobDeregisterBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: job deregistration unavailable")
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	purge := false
	if v := r.URL.Query().Get("purge"); v != "" {
		if purge, err = strconv.ParseBool(v); err != nil {
			return nil, Errorf(http.StatusBadRequest, "invalid purge %q", v)
		}
	}
	prio := 0
	if v := r.URL.Query().Get("eval_priority"); v != "" {
		if prio, err = strconv.Atoi(v); err != nil {
			return nil, Errorf(http.StatusBadRequest, "invalid eval_priority %q", v)
		}
		if err := structs.CheckEvalPriority(prio); err != nil {
			return nil, Errorf(http.StatusBadRequest, "%s", err)
		}
	}
	global := false
	if v := r.URL.Query().Get("global"); v != "" {
		if global, err = strconv.ParseBool(v); err != nil {
			return nil, Errorf(http.StatusBadRequest, "invalid global %q", v)
		}
	}
	id := r.PathValue("id")
	ns := o.Namespace // never "*": a write names its namespace (namespace.go)
	job, err := s.backend.State().Snapshot().JobByID(ns, id)
	if err != nil {
		return nil, err
	}
	if job == nil {
		// Nothing to stop: as Nomad's, a success that wrote nothing.
		s.setMeta(w, 0)
		return &JobDeregisterResponse{}, nil
	}
	var out *JobDeregisterResponse
	if global && job.IsMultiregion() {
		// Every region of a multi-region job (multiregion_register.go).
		out, err = s.deregisterMultiregion(r, db, job, ns, purge, prio)
	} else {
		out, err = db.DeregisterJob(structs.WithEvalPriority(r.Context(), prio), ns, id, purge)
	}
	if err != nil {
		return nil, fmt.Errorf("deregistering job %q: %w", id, err)
	}
	s.setMeta(w, out.Index)
	return out, nil
}
