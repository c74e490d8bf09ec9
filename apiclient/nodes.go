package apiclient

import (
	"context"
	"net/url"

	"github.com/droverhq/drover/structs"
)

// Nodes is the /v1/node(s) endpoints.
type Nodes struct{ c *Client }

// Nodes returns the node endpoints.
func (c *Client) Nodes() *Nodes { return &Nodes{c} }

// List returns node stubs (q.Prefix filters by ID prefix).
func (n *Nodes) List(ctx context.Context, q *QueryOptions) ([]*structs.NodeListStub, *QueryMeta, error) {
	var out []*structs.NodeListStub
	meta, err := n.c.Get(ctx, "/v1/nodes", q, &out)
	return out, meta, err
}

// Info returns one node; a 404 satisfies IsNotFound.
func (n *Nodes) Info(ctx context.Context, id string, q *QueryOptions) (*structs.Node, *QueryMeta, error) {
	var out structs.Node
	meta, err := n.c.Get(ctx, "/v1/node/"+url.PathEscape(id), q, &out)
	if err != nil {
		return nil, meta, err
	}
	return &out, meta, nil
}

// Allocations returns the node's allocations, each with its job.
func (n *Nodes) Allocations(ctx context.Context, id string, q *QueryOptions) ([]*structs.Allocation, *QueryMeta, error) {
	var out []*structs.Allocation
	meta, err := n.c.Get(ctx, "/v1/node/"+url.PathEscape(id)+"/allocations", q, &out)
	return out, meta, err
}
