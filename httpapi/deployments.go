package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The deployment endpoints, Nomad's paths and shapes:
//
//	GET /v1/deployments?prefix=            → []*structs.Deployment (blocking)
//	GET /v1/deployment/{id}                → *structs.Deployment, 404 if unknown (blocking)
//	GET /v1/deployment/allocations/{id}    → []*structs.AllocationListStub (blocking)
//	PUT|POST /v1/deployment/promote/{id}   {"DeploymentID","All","Groups"}
//	PUT|POST /v1/deployment/fail/{id}      {"DeploymentID"}
//	PUT|POST /v1/deployment/pause/{id}     {"DeploymentID","Pause"}
//	PUT|POST /v1/deployment/allocation-health/{id}
//	         {"DeploymentID","HealthyAllocationIDs","UnhealthyAllocationIDs"}
//	PUT|POST /v1/deployment/unblock/{id}   {"DeploymentID"} (a blocked multi-region deployment)
//
// The verbs answer structs.DeploymentUpdateResponse {"EvalID",
// "EvalCreateIndex","DeploymentModifyIndex","RevertedJobVersion","Index"}.
// The ID in the path wins over the body's; the body may be empty. A refusal
// (terminal deployment, unhealthy canaries, unknown group or allocation)
// is a 400 with the verb's message, an unknown deployment a 404.

func init() {
	register(
		route{"GET /v1/deployments", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).deploymentsList},
		route{"GET /v1/deployment/{id}", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).deploymentInfo},
		route{"GET /v1/deployment/allocations/{id}", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).deploymentAllocs},
	)
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/deployment/promote/{id}", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).deploymentPromote},
			route{m + " /v1/deployment/fail/{id}", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).deploymentFail},
			route{m + " /v1/deployment/pause/{id}", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).deploymentPause},
			route{m + " /v1/deployment/allocation-health/{id}", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).deploymentAllocHealth},
			route{m + " /v1/deployment/unblock/{id}", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).deploymentUnblock},
		)
	}
}

// OperatorBackend is what the operator verbs need beyond Backend: the
// leader's methods that validate a verb against the latest state, stamp
// it and write it as one Raft entry (server.Leader implements it). A
// Backend that does not implement it answers the verbs with 501.
//
// Refusals must match state.ErrInvalid (400), unknown IDs
// state.ErrNotFound (404).
type OperatorBackend interface {
	// PromoteDeployment promotes the canaries of groups, or of all canary
	// groups when all is set or groups is empty.
	PromoteDeployment(ctx context.Context, id string, groups []string, all bool) (*structs.DeploymentUpdateResponse, error)
	// FailDeployment fails the deployment, reverting when it auto-reverts.
	FailDeployment(ctx context.Context, id string) (*structs.DeploymentUpdateResponse, error)
	// PauseDeployment pauses (true) or resumes (false) the deployment.
	PauseDeployment(ctx context.Context, id string, pause bool) (*structs.DeploymentUpdateResponse, error)
	// SetAllocHealth sets the deployment health of allocations by hand.
	SetAllocHealth(ctx context.Context, id string, healthy, unhealthy []string) (*structs.DeploymentUpdateResponse, error)
	// RevertJob registers an earlier version again as a new version.
	RevertJob(ctx context.Context, namespace, jobID string, version uint64, enforcePriorVersion *uint64) (*structs.JobRevertResponse, error)
	// SetJobStability marks a job version stable or not.
	SetJobStability(ctx context.Context, namespace, jobID string, version uint64, stable bool) (*structs.JobStabilityResponse, error)
}

// operator returns the backend's operator verbs, or a 501.
func (s *Server) operator() (OperatorBackend, error) {
	ob, ok := s.backend.(OperatorBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: operator verbs are not available on this agent")
	}
	return ob, nil
}

// decodeOptionalBody decodes a JSON body into v; an empty body leaves v
// as it is.
func decodeOptionalBody(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return Errorf(http.StatusRequestEntityTooLarge, "request body too large: %w", err)
		}
		return Errorf(http.StatusBadRequest, "reading request body: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return Errorf(http.StatusBadRequest, "malformed request body: %w", err)
	}
	return nil
}

// deploymentsList answers the deployments in the namespace, newest first,
// filtered by ?prefix.
func (s *Server) deploymentsList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		deps, err := snap.DeploymentsByIDPrefix(o.Prefix)
		if err != nil {
			return nil, 0, err
		}
		out := []*structs.Deployment{}
		for _, d := range deps {
			if o.matchNamespace(d.Namespace) {
				out = append(out, d)
			}
		}
		sortDeployments(out)
		idx, err := snap.Index(state.TableDeployments)
		return out, idx, err
	})
}

// sortDeployments orders newest first (highest CreateIndex), then by ID.
func sortDeployments(deps []*structs.Deployment) {
	sort.Slice(deps, func(a, b int) bool {
		if deps[a].CreateIndex != deps[b].CreateIndex {
			return deps[a].CreateIndex > deps[b].CreateIndex
		}
		return deps[a].ID < deps[b].ID
	})
}

// deploymentInfo answers one deployment; 404 if unknown.
func (s *Server) deploymentInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		d, err := snap.DeploymentByID(id)
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.Index(state.TableDeployments)
		if err != nil {
			return nil, 0, err
		}
		if d == nil {
			return nil, idx, Errorf(http.StatusNotFound, "deployment not found")
		}
		if err := checkNamespace(r, d.Namespace); err != nil {
			return nil, idx, err
		}
		return d, idx, nil
	})
}

// deploymentAllocs answers the stubs of the deployment's allocations, by
// creation; 404 for an unknown deployment.
func (s *Server) deploymentAllocs(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		d, err := snap.DeploymentByID(id)
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.MaxIndex(state.TableDeployments, state.TableAllocs)
		if err != nil {
			return nil, 0, err
		}
		if d == nil {
			return nil, idx, Errorf(http.StatusNotFound, "deployment not found")
		}
		if err := checkNamespace(r, d.Namespace); err != nil {
			return nil, idx, err
		}
		allocs, err := snap.AllocsByDeployment(id)
		if err != nil {
			return nil, 0, err
		}
		sort.Slice(allocs, func(a, b int) bool {
			if allocs[a].CreateIndex != allocs[b].CreateIndex {
				return allocs[a].CreateIndex < allocs[b].CreateIndex
			}
			return allocs[a].ID < allocs[b].ID
		})
		out := make([]*structs.AllocationListStub, 0, len(allocs))
		for _, a := range allocs {
			out = append(out, a.Stub())
		}
		return out, idx, nil
	})
}

// DeploymentPromoteRequest is the body of the promote verb.
type DeploymentPromoteRequest struct {
	DeploymentID string
	All          bool
	Groups       []string
}

// DeploymentPauseRequest is the body of the pause verb.
type DeploymentPauseRequest struct {
	DeploymentID string
	Pause        bool
}

// DeploymentAllocHealthRequest is the body of the allocation-health verb.
type DeploymentAllocHealthRequest struct {
	DeploymentID           string
	HealthyAllocationIDs   []string
	UnhealthyAllocationIDs []string
}

// checkDeployment checks the route's capability in the namespace of the
// deployment the path names (an unknown one is the verb's 404).
func (s *Server) checkDeployment(r *http.Request) error {
	d, err := s.backend.State().Snapshot().DeploymentByID(r.PathValue("id"))
	if err != nil || d == nil {
		return err
	}
	return checkNamespace(r, d.Namespace)
}

// verbAnswer sets the index header and passes the answer on.
func (s *Server) verbAnswer(w http.ResponseWriter, resp *structs.DeploymentUpdateResponse, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	s.setMeta(w, resp.Index)
	return resp, nil
}

func (s *Server) deploymentPromote(w http.ResponseWriter, r *http.Request) (any, error) {
	ob, err := s.operator()
	if err != nil {
		return nil, err
	}
	if err := s.checkDeployment(r); err != nil {
		return nil, err
	}
	var req DeploymentPromoteRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	resp, err := ob.PromoteDeployment(r.Context(), r.PathValue("id"), req.Groups, req.All || len(req.Groups) == 0)
	return s.verbAnswer(w, resp, err)
}

func (s *Server) deploymentFail(w http.ResponseWriter, r *http.Request) (any, error) {
	ob, err := s.operator()
	if err != nil {
		return nil, err
	}
	if err := s.checkDeployment(r); err != nil {
		return nil, err
	}
	var req struct{ DeploymentID string }
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	resp, err := ob.FailDeployment(r.Context(), r.PathValue("id"))
	return s.verbAnswer(w, resp, err)
}

// DeploymentUnblockBackend ends a blocked multi-region deployment by hand
// (server.Leader.UnblockDeployment); refusals match state.ErrInvalid.
type DeploymentUnblockBackend interface {
	UnblockDeployment(ctx context.Context, id string) (*structs.DeploymentUpdateResponse, error)
}

func (s *Server) deploymentUnblock(w http.ResponseWriter, r *http.Request) (any, error) {
	ub, ok := s.backend.(DeploymentUnblockBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: operator verbs are not available on this agent")
	}
	if err := s.checkDeployment(r); err != nil {
		return nil, err
	}
	var req struct{ DeploymentID string }
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	resp, err := ub.UnblockDeployment(r.Context(), r.PathValue("id"))
	return s.verbAnswer(w, resp, err)
}

func (s *Server) deploymentPause(w http.ResponseWriter, r *http.Request) (any, error) {
	ob, err := s.operator()
	if err != nil {
		return nil, err
	}
	if err := s.checkDeployment(r); err != nil {
		return nil, err
	}
	var req DeploymentPauseRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	resp, err := ob.PauseDeployment(r.Context(), r.PathValue("id"), req.Pause)
	return s.verbAnswer(w, resp, err)
}

func (s *Server) deploymentAllocHealth(w http.ResponseWriter, r *http.Request) (any, error) {
	ob, err := s.operator()
	if err != nil {
		return nil, err
	}
	if err := s.checkDeployment(r); err != nil {
		return nil, err
	}
	var req DeploymentAllocHealthRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	resp, err := ob.SetAllocHealth(r.Context(), r.PathValue("id"), req.HealthyAllocationIDs, req.UnhealthyAllocationIDs)
	return s.verbAnswer(w, resp, err)
}
