package client

import "github.com/droverhq/drover/apiclient"

// NewHTTPServersOver returns the ServerAPI over an existing NodeClient.
// Many agents in one process (a fleet simulator) each take one forked
// from a shared client (apiclient.NodeClient.Fork), and with it one
// connection pool.
func NewHTTPServersOver(nc *apiclient.NodeClient) *HTTPServers {
	return &HTTPServers{nc: nc}
}
