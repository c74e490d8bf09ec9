package apiclient

import (
	"context"
	"net/url"

	"github.com/droverhq/drover/structs"
)

// The ACL endpoints (website/api/acl.md).

// ACLBootstrap bootstraps the ACL system and returns the management
// token, with its SecretID (PUT /v1/acl/bootstrap); secret, when not
// empty, is the SecretID to give it.
func (c *Client) ACLBootstrap(ctx context.Context, secret string) (*structs.ACLToken, error) {
	var in any
	if secret != "" {
		in = map[string]string{"BootstrapSecret": secret}
	}
	var out structs.ACLToken
	if _, err := c.Put(ctx, "/v1/acl/bootstrap", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ACLPolicies lists the policies the token may see (GET /v1/acl/policies).
func (c *Client) ACLPolicies(ctx context.Context, q *QueryOptions) ([]*structs.ACLPolicyListStub, error) {
	var out []*structs.ACLPolicyListStub
	_, err := c.Get(ctx, "/v1/acl/policies", q, &out)
	return out, err
}

// ACLPolicy reads one policy (GET /v1/acl/policy/{name}).
func (c *Client) ACLPolicy(ctx context.Context, name string) (*structs.ACLPolicy, error) {
	var out structs.ACLPolicy
	if _, err := c.Get(ctx, "/v1/acl/policy/"+url.PathEscape(name), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ACLPolicyApply creates or replaces a policy (PUT /v1/acl/policy/{name}).
func (c *Client) ACLPolicyApply(ctx context.Context, p *structs.ACLPolicy) error {
	_, err := c.Put(ctx, "/v1/acl/policy/"+url.PathEscape(p.Name), p, nil)
	return err
}

// ACLPolicyDelete deletes a policy (DELETE /v1/acl/policy/{name}).
func (c *Client) ACLPolicyDelete(ctx context.Context, name string) error {
	_, err := c.Delete(ctx, "/v1/acl/policy/"+url.PathEscape(name), nil, nil)
	return err
}

// ACLTokens lists the tokens, without secrets (GET /v1/acl/tokens).
func (c *Client) ACLTokens(ctx context.Context, q *QueryOptions) ([]*structs.ACLTokenListStub, error) {
	var out []*structs.ACLTokenListStub
	_, err := c.Get(ctx, "/v1/acl/tokens", q, &out)
	return out, err
}

// ACLTokenCreate creates a token and returns it with its SecretID, the
// only time it is shown (PUT /v1/acl/token).
func (c *Client) ACLTokenCreate(ctx context.Context, t *structs.ACLToken) (*structs.ACLToken, error) {
	var out structs.ACLToken
	if _, err := c.Put(ctx, "/v1/acl/token", t, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ACLTokenUpdate updates a token's name, policies and Global flag
// (PUT /v1/acl/token/{accessor}).
func (c *Client) ACLTokenUpdate(ctx context.Context, t *structs.ACLToken) (*structs.ACLToken, error) {
	var out structs.ACLToken
	if _, err := c.Put(ctx, "/v1/acl/token/"+url.PathEscape(t.AccessorID), t, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ACLToken reads a token, without its secret (GET /v1/acl/token/{accessor}).
func (c *Client) ACLToken(ctx context.Context, accessor string) (*structs.ACLToken, error) {
	var out structs.ACLToken
	if _, err := c.Get(ctx, "/v1/acl/token/"+url.PathEscape(accessor), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ACLTokenSelf reads the caller's token (GET /v1/acl/token/self).
func (c *Client) ACLTokenSelf(ctx context.Context) (*structs.ACLToken, error) {
	var out structs.ACLToken
	if _, err := c.Get(ctx, "/v1/acl/token/self", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ACLTokenDelete deletes a token (DELETE /v1/acl/token/{accessor}).
func (c *Client) ACLTokenDelete(ctx context.Context, accessor string) error {
	_, err := c.Delete(ctx, "/v1/acl/token/"+url.PathEscape(accessor), nil, nil)
	return err
}

// ResolveACL asks the servers what a token grants, on behalf of a client
// node (PUT /v1/internal/acl/resolve, authenticated by the context's node
// secret; see WithToken).
func (n *NodeClient) ResolveACL(ctx context.Context, secret string) (*structs.ACLResolveResponse, error) {
	var out structs.ACLResolveResponse
	err := n.try(ctx, nil, func(ctx context.Context, c *Client) error {
		_, err := c.Put(ctx, "/v1/internal/acl/resolve", &structs.ACLResolveRequest{SecretID: secret}, &out)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// AllocIdentities asks the servers, as the node the allocation is on
// (its secret in the context, see WithToken), for the workload
// identities of the allocation's tasks: those named, every task of its
// group when none is (PUT /v1/internal/alloc/{id}/identity).
func (n *NodeClient) AllocIdentities(ctx context.Context, allocID string, tasks []string) (*structs.AllocIdentityResponse, error) {
	var out structs.AllocIdentityResponse
	err := n.try(ctx, nil, func(ctx context.Context, c *Client) error {
		_, err := c.Put(ctx, "/v1/internal/alloc/"+url.PathEscape(allocID)+"/identity", &structs.AllocIdentityRequest{Tasks: tasks}, &out)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
