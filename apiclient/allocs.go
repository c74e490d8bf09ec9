package apiclient

import (
	"context"
	"net/url"

	"github.com/droverhq/drover/structs"
)

// Allocations is the /v1/allocation(s) endpoints.
type Allocations struct{ c *Client }

// Allocations returns the allocation endpoints.
func (c *Client) Allocations() *Allocations { return &Allocations{c} }

// List returns allocation stubs (q.Prefix filters by ID prefix).
func (a *Allocations) List(ctx context.Context, q *QueryOptions) ([]*structs.AllocationListStub, *QueryMeta, error) {
	var out []*structs.AllocationListStub
	meta, err := a.c.Get(ctx, "/v1/allocations", q, &out)
	return out, meta, err
}

// Info returns one allocation with its job; a 404 satisfies IsNotFound.
func (a *Allocations) Info(ctx context.Context, id string, q *QueryOptions) (*structs.Allocation, *QueryMeta, error) {
	var out structs.Allocation
	meta, err := a.c.Get(ctx, "/v1/allocation/"+url.PathEscape(id), q, &out)
	if err != nil {
		return nil, meta, err
	}
	return &out, meta, nil
}
