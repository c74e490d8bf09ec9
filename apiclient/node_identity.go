package apiclient

import (
	"context"
	"net/url"

	"github.com/droverhq/drover/structs"
)

// NodeIdentity asks the servers for a new identity of the node (PUT
// /v1/internal/node/{id}/identity), as the node whose secret the context
// carries.
func (n *NodeClient) NodeIdentity(ctx context.Context, nodeID string) (*structs.NodeIdentityResponse, error) {
	var out structs.NodeIdentityResponse
	err := n.try(ctx, nil, func(ctx context.Context, c *Client) error {
		_, err := c.Put(ctx, "/v1/internal/node/"+url.PathEscape(nodeID)+"/identity", nil, &out)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

type introTokenKey struct{}

// WithIntroToken returns a context whose requests carry a client
// introduction token (structs.ClientIntroTokenHeader): a new node's
// registration presents it.
func WithIntroToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, introTokenKey{}, token)
}

func introTokenOf(ctx context.Context) string {
	t, _ := ctx.Value(introTokenKey{}).(string)
	return t
}
