package apiclient

import (
	"fmt"
	"net/http"
)

// NewWithHTTPClient is New with the given *http.Client, so that many
// clients can share one transport and its connection pool (a fleet
// simulator running thousands of nodes in one process). hc must not be
// nil.
func NewWithHTTPClient(address string, hc *http.Client) (*Client, error) {
	if hc == nil {
		return nil, fmt.Errorf("invalid address %q: no http client", address)
	}
	c, err := New(address)
	if err != nil {
		return nil, err
	}
	c.http = hc
	return c, nil
}

// NewNodeClientWithHTTPClient is NewNodeClient whose calls all go through
// hc.
func NewNodeClientWithHTTPClient(addrs []string, hc *http.Client) (*NodeClient, error) {
	if len(addrs) == 0 {
		return nil, ErrNoServers
	}
	n := &NodeClient{}
	for _, a := range addrs {
		c, err := NewWithHTTPClient(a, hc)
		if err != nil {
			return nil, err
		}
		n.clients = append(n.clients, c)
	}
	n.init()
	return n, nil
}
