package client

import (
	"fmt"

	"github.com/droverhq/drover/apiclient"
)

// NewHTTPServersFrom returns the ServerAPI over an existing NodeClient.
// Many agents in one process (a fleet simulator) share one this way, and
// with it one connection pool; each still registers its own node.
func NewHTTPServersFrom(nc *apiclient.NodeClient) (*HTTPServers, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: no node client", ErrInvalidConfig)
	}
	return &HTTPServers{nc: nc}, nil
}
