package agent

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/server"
)

var _ httpapi.NodeDrainBackend = (*Agent)(nil)

// UpdateNodeDrain sets, changes or removes a node's drain
// (httpapi.NodeDrainBackend; server.Leader.UpdateNodeDrain): an unknown
// node is a 404, bad input a 400.
func (a *Agent) UpdateNodeDrain(ctx context.Context, req httpapi.NodeDrainRequest) (*httpapi.NodeUpdateResponse, error) {
	r, err := a.leader.UpdateNodeDrain(ctx, server.DrainRequest{
		NodeID: req.NodeID, Spec: req.DrainSpec, MarkEligible: req.MarkEligible, Meta: req.Meta, AccessorID: req.AccessorID,
	})
	if err != nil {
		return nil, nodeUpdateError(err)
	}
	return &httpapi.NodeUpdateResponse{NodeModifyIndex: r.NodeModifyIndex, EvalIDs: r.EvalIDs, EvalCreateIndex: r.EvalCreateIndex}, nil
}

// UpdateNodeEligibility sets a node's scheduling eligibility
// (httpapi.NodeDrainBackend; server.Leader.UpdateNodeEligibility).
func (a *Agent) UpdateNodeEligibility(ctx context.Context, nodeID, eligibility string) (*httpapi.NodeUpdateResponse, error) {
	r, err := a.leader.UpdateNodeEligibility(ctx, nodeID, eligibility)
	if err != nil {
		return nil, nodeUpdateError(err)
	}
	return &httpapi.NodeUpdateResponse{NodeModifyIndex: r.NodeModifyIndex, EvalIDs: r.EvalIDs, EvalCreateIndex: r.EvalCreateIndex}, nil
}

// nodeUpdateError turns the leader's refusals into their HTTP answers: bad
// input 400, an unknown node 404 (it wraps state.ErrNotFound), as Nomad's
// "node not found".
func nodeUpdateError(err error) error {
	switch {
	case errors.Is(err, server.ErrInvalidRequest):
		return httpapi.Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "server: invalid request: "))
	case errors.Is(err, server.ErrNodeNotFound):
		return httpapi.Errorf(http.StatusNotFound, "node not found: %s", strings.TrimPrefix(err.Error(), server.ErrNodeNotFound.Error()+": "))
	}
	return err
}
