package httpapi

import (
	"context"
	"net/http"

	"github.com/droverhq/drover/acl"
)

// PUT|POST /v1/job/{id}/dispatch makes a child of a parameterized job, as
// Nomad's: the body is a JobDispatchRequest {"Payload": base64, "Meta",
// "IdempotencyToken", "IdPrefixTemplate", "Priority"} (Nomad's Go client
// sends the token as ?idempotency_token=, which is read too); the answer {"DispatchedJobID",
// "EvalID", "EvalCreateIndex", "JobCreateIndex", "Index"}. 400 for a job
// that is not parameterized or is stopped, and for meta or a payload its
// parameterized block refuses (naming Meta or Payload); 404 for an unknown
// job.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/job/{id}/dispatch", writeRoute, nsCap(acl.NamespaceCapabilityDispatchJob), (*Server).jobDispatch})
	}
}

// DispatchRequest is a dispatch asked through the API.
type DispatchRequest struct {
	Namespace, JobID string
	Payload          []byte
	Meta             map[string]string
	IdempotencyToken string
	IDPrefixTemplate string
	// Priority, when not 0, is the child's priority instead of the job's.
	Priority int
}

// DispatchResponse answers a dispatch, as Nomad's JobDispatchResponse.
type DispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	Index           uint64
}

// DispatchBackend is how a server dispatches a parameterized job
// (server.Leader.Dispatch): an invalid dispatch is a 400, an unknown job a
// 404.
type DispatchBackend interface {
	Dispatch(ctx context.Context, req DispatchRequest) (*DispatchResponse, error)
}

func (s *Server) jobDispatch(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.registrationAllowed(r); err != nil {
		return nil, err
	}
	db, ok := s.backend.(DispatchBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: dispatch unavailable")
	}
	var body struct {
		JobID            string
		Payload          []byte
		Meta             map[string]string
		IdempotencyToken string
		IdPrefixTemplate string
		Priority         int
	}
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	token := body.IdempotencyToken
	if q := r.URL.Query().Get("idempotency_token"); q != "" {
		if token != "" && token != q {
			return nil, Errorf(http.StatusBadRequest, "IdempotencyToken %q and idempotency_token %q differ", token, q)
		}
		token = q
	}
	if body.JobID != "" && body.JobID != id {
		return nil, Errorf(http.StatusBadRequest, "JobID %q does not match the path's job %q", body.JobID, id)
	}
	out, err := db.Dispatch(r.Context(), DispatchRequest{
		Namespace: o.Namespace, JobID: id, Payload: body.Payload, Meta: body.Meta,
		IdempotencyToken: token, IDPrefixTemplate: body.IdPrefixTemplate, Priority: body.Priority,
	})
	if err != nil {
		return nil, err
	}
	s.setMeta(w, out.Index)
	return out, nil
}
