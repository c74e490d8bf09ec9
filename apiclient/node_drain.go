package apiclient

import (
	"context"
	"net/url"
	"time"

	"github.com/droverhq/drover/structs"
)

// NodeUpdateResponse answers a drain or eligibility update, as Nomad's.
type NodeUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
}

// DrainOptions is a drain to set (Spec) or to remove (Spec nil), as
// Nomad's api.DrainOptions.
type DrainOptions struct {
	Spec *structs.DrainSpec
	// MarkEligible makes the node eligible again when the drain is
	// removed.
	MarkEligible bool
	// Meta is kept in the node's LastDrain (a "message", say).
	Meta map[string]string
}

// UpdateDrain sets, changes or removes a node's drain
// (PUT /v1/node/{id}/drain); a 404 satisfies IsNotFound.
func (n *Nodes) UpdateDrain(ctx context.Context, id string, o DrainOptions) (*NodeUpdateResponse, error) {
	body := map[string]any{"NodeID": id, "MarkEligible": o.MarkEligible, "Meta": o.Meta, "DrainSpec": nil}
	if o.Spec != nil {
		body["DrainSpec"] = map[string]any{"Deadline": int64(o.Spec.Deadline / time.Nanosecond), "IgnoreSystemJobs": o.Spec.IgnoreSystemJobs}
	}
	var out NodeUpdateResponse
	if _, err := n.c.Put(ctx, "/v1/node/"+url.PathEscape(id)+"/drain", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ToggleEligibility makes a node eligible or ineligible for new
// allocations (PUT /v1/node/{id}/eligibility).
func (n *Nodes) ToggleEligibility(ctx context.Context, id string, eligible bool) (*NodeUpdateResponse, error) {
	e := structs.NodeSchedulingIneligible
	if eligible {
		e = structs.NodeSchedulingEligible
	}
	var out NodeUpdateResponse
	if _, err := n.c.Put(ctx, "/v1/node/"+url.PathEscape(id)+"/eligibility", map[string]string{"NodeID": id, "Eligibility": e}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
