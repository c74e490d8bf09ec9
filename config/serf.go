package config

import (
	"net"
	"strconv"
)

// ports.serf is Nomad's gossip port. Drover's servers do not gossip: they
// find each other over HTTP (server.retry_join, the join exchange). A
// server given ports.serf answers that join exchange on this port too, on
// the HTTP bind address, so that what names a Nomad server by its serf
// address (server join HOST:4648, Nomad's API tests) reaches it. Nothing
// else is served there. 0, the default, serves nothing.

// SerfAddr is the host:port of ports.serf, "" when it is not set.
func (c *Config) SerfAddr() string {
	if c.Ports.Serf == 0 {
		return ""
	}
	return net.JoinHostPort(orElse(c.Addresses.HTTP, c.BindAddr), strconv.Itoa(c.Ports.Serf))
}

// serfPort checks ports.serf: a port, not one of the others.
func (v *validator) serfPort() {
	c := v.c
	if c.Ports.Serf == 0 {
		return
	}
	v.port("ports.serf", c.Ports.Serf)
	if c.Ports.Serf == c.Ports.HTTP {
		v.errorf("ports.serf", "ports.serf and ports.http are both %d", c.Ports.Serf)
	}
	if c.Ports.Serf == c.Ports.Raft && orElse(c.Addresses.Raft, c.BindAddr) == orElse(c.Addresses.HTTP, c.BindAddr) {
		v.errorf("ports.serf", "ports.serf and ports.raft are both %d on the same address", c.Ports.Serf)
	}
}
