package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/droverhq/drover/structs"
)

// A node's drain and eligibility, Nomad's paths and shapes:
//
//	PUT|POST /v1/node/{id}/drain {"DrainSpec": {"Deadline": ns,
//	    "IgnoreSystemJobs": bool}, "MarkEligible": bool, "Meta": {...}}
//	    → {"NodeModifyIndex", "EvalIDs", "EvalCreateIndex"}: DrainSpec set
//	    starts or changes the drain (Deadline -1 forces it, 0 has none);
//	    null removes it, MarkEligible making the node eligible again.
//	PUT|POST /v1/node/{id}/eligibility {"Eligibility": "eligible"|"ineligible"}
//	    → {"NodeModifyIndex", "EvalIDs", "EvalCreateIndex"}
//
// Both need node:write. An unknown node is a 404, a deadline below -1, an
// unknown eligibility or making a draining node eligible a 400.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/node/{id}/drain", writeRoute, nodeWrite, (*Server).nodeDrain},
			route{m + " /v1/node/{id}/eligibility", writeRoute, nodeWrite, (*Server).nodeEligibility},
		)
	}
}

// NodeDrainRequest is a drain asked through the API.
type NodeDrainRequest struct {
	NodeID       string
	DrainSpec    *structs.DrainSpec
	MarkEligible bool
	Meta         map[string]string
	// AccessorID is the ACL token that asked ("" without ACLs).
	AccessorID string
}

// NodeUpdateResponse answers a drain or an eligibility update, as Nomad's
// NodeDrainUpdateResponse and NodeEligibilityUpdateResponse.
type NodeUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
}

// NodeDrainBackend is how a server drains nodes (server.Leader's
// UpdateNodeDrain and UpdateNodeEligibility): an unknown node wraps
// state.ErrNotFound (404), bad input an error the HTTP layer answers with
// 400.
type NodeDrainBackend interface {
	UpdateNodeDrain(ctx context.Context, req NodeDrainRequest) (*NodeUpdateResponse, error)
	UpdateNodeEligibility(ctx context.Context, nodeID, eligibility string) (*NodeUpdateResponse, error)
}

func (s *Server) nodeDrainBackend() (NodeDrainBackend, error) {
	nb, ok := s.backend.(NodeDrainBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: node drains unavailable")
	}
	return nb, nil
}

func (s *Server) nodeDrain(w http.ResponseWriter, r *http.Request) (any, error) {
	nb, err := s.nodeDrainBackend()
	if err != nil {
		return nil, err
	}
	var body struct {
		NodeID    string
		DrainSpec *struct {
			Deadline         *int64
			IgnoreSystemJobs bool
		}
		MarkEligible bool
		Meta         map[string]string
	}
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if body.NodeID != "" && body.NodeID != id {
		return nil, Errorf(http.StatusBadRequest, "NodeID %q does not match the path's node %q", body.NodeID, id)
	}
	req := NodeDrainRequest{NodeID: id, MarkEligible: body.MarkEligible, Meta: body.Meta}
	if d := body.DrainSpec; d != nil {
		req.DrainSpec = &structs.DrainSpec{IgnoreSystemJobs: d.IgnoreSystemJobs}
		if d.Deadline != nil {
			if *d.Deadline < -1 {
				return nil, Errorf(http.StatusBadRequest,
					"DrainSpec.Deadline must be positive, 0 for no deadline or -1 to force the drain (got %d)", *d.Deadline)
			}
			req.DrainSpec.Deadline = time.Duration(*d.Deadline)
		}
	}
	if z := authzOf(r); z.token != nil {
		req.AccessorID = z.token.AccessorID
	}
	out, err := nb.UpdateNodeDrain(r.Context(), req)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, out.NodeModifyIndex)
	return out, nil
}

func (s *Server) nodeEligibility(w http.ResponseWriter, r *http.Request) (any, error) {
	nb, err := s.nodeDrainBackend()
	if err != nil {
		return nil, err
	}
	var body struct {
		NodeID      string
		Eligibility string
	}
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if body.NodeID != "" && body.NodeID != id {
		return nil, Errorf(http.StatusBadRequest, "NodeID %q does not match the path's node %q", body.NodeID, id)
	}
	switch body.Eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return nil, Errorf(http.StatusBadRequest, "Eligibility must be %q or %q (got %q)",
			structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible, body.Eligibility)
	}
	out, err := nb.UpdateNodeEligibility(r.Context(), id, body.Eligibility)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, out.NodeModifyIndex)
	return out, nil
}
