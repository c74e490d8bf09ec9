package apiclient

import (
	"context"
	"net/url"

	"github.com/droverhq/drover/structs"
)

// Evaluations is the /v1/evaluation(s) endpoints.
type Evaluations struct{ c *Client }

// Evaluations returns the evaluation endpoints.
func (c *Client) Evaluations() *Evaluations { return &Evaluations{c} }

// List returns evaluations (q.Prefix filters by ID prefix).
func (e *Evaluations) List(ctx context.Context, q *QueryOptions) ([]*structs.Evaluation, *QueryMeta, error) {
	var out []*structs.Evaluation
	meta, err := e.c.Get(ctx, "/v1/evaluations", q, &out)
	return out, meta, err
}

// Info returns one evaluation; a 404 satisfies IsNotFound.
func (e *Evaluations) Info(ctx context.Context, id string, q *QueryOptions) (*structs.Evaluation, *QueryMeta, error) {
	var out structs.Evaluation
	meta, err := e.c.Get(ctx, "/v1/evaluation/"+url.PathEscape(id), q, &out)
	if err != nil {
		return nil, meta, err
	}
	return &out, meta, nil
}

// Allocations returns the stubs of the allocations the evaluation placed.
func (e *Evaluations) Allocations(ctx context.Context, id string, q *QueryOptions) ([]*structs.AllocationListStub, *QueryMeta, error) {
	var out []*structs.AllocationListStub
	meta, err := e.c.Get(ctx, "/v1/evaluation/"+url.PathEscape(id)+"/allocations", q, &out)
	return out, meta, err
}
