package apiclient

import (
	"context"
	"net/url"

	"github.com/droverhq/drover/structs"
)

// Deployments is the /v1/deployment(s) endpoints.
type Deployments struct{ c *Client }

// Deployments returns the deployment endpoints.
func (c *Client) Deployments() *Deployments { return &Deployments{c} }

// List returns the deployments, newest first (q.Prefix filters by ID).
func (d *Deployments) List(ctx context.Context, q *QueryOptions) ([]*structs.Deployment, *QueryMeta, error) {
	var out []*structs.Deployment
	meta, err := d.c.Get(ctx, "/v1/deployments", q, &out)
	return out, meta, err
}

// Info returns one deployment; a 404 answer satisfies IsNotFound.
func (d *Deployments) Info(ctx context.Context, id string, q *QueryOptions) (*structs.Deployment, *QueryMeta, error) {
	var out structs.Deployment
	meta, err := d.c.Get(ctx, "/v1/deployment/"+url.PathEscape(id), q, &out)
	if err != nil {
		return nil, meta, err
	}
	return &out, meta, nil
}

// Allocations returns the stubs of the deployment's allocations.
func (d *Deployments) Allocations(ctx context.Context, id string, q *QueryOptions) ([]*structs.AllocationListStub, *QueryMeta, error) {
	var out []*structs.AllocationListStub
	meta, err := d.c.Get(ctx, "/v1/deployment/allocations/"+url.PathEscape(id), q, &out)
	return out, meta, err
}

func (d *Deployments) verb(ctx context.Context, name, id string, body any) (*structs.DeploymentUpdateResponse, error) {
	var out structs.DeploymentUpdateResponse
	if _, err := d.c.Put(ctx, "/v1/deployment/"+name+"/"+url.PathEscape(id), body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Promote promotes the canaries of the named groups, or of every canary
// group when groups is empty.
func (d *Deployments) Promote(ctx context.Context, id string, groups []string) (*structs.DeploymentUpdateResponse, error) {
	return d.verb(ctx, "promote", id, map[string]any{"DeploymentID": id, "All": len(groups) == 0, "Groups": groups})
}

// Fail marks the deployment failed (reverting when it auto-reverts).
func (d *Deployments) Fail(ctx context.Context, id string) (*structs.DeploymentUpdateResponse, error) {
	return d.verb(ctx, "fail", id, map[string]any{"DeploymentID": id})
}

// Pause pauses (true) or resumes (false) the deployment.
func (d *Deployments) Pause(ctx context.Context, id string, pause bool) (*structs.DeploymentUpdateResponse, error) {
	return d.verb(ctx, "pause", id, map[string]any{"DeploymentID": id, "Pause": pause})
}

// Unblock makes a blocked multi-region deployment successful.
func (d *Deployments) Unblock(ctx context.Context, id string) (*structs.DeploymentUpdateResponse, error) {
	return d.verb(ctx, "unblock", id, map[string]any{"DeploymentID": id})
}

// SetAllocHealth marks allocations of the deployment healthy or unhealthy.
func (d *Deployments) SetAllocHealth(ctx context.Context, id string, healthy, unhealthy []string) (*structs.DeploymentUpdateResponse, error) {
	return d.verb(ctx, "allocation-health", id, map[string]any{
		"DeploymentID": id, "HealthyAllocationIDs": healthy, "UnhealthyAllocationIDs": unhealthy,
	})
}
