package config

import (
	"net/netip"
	"strings"
)

// bridge checks the client's bridge networking fields (Nomad's): the
// bridge's name is a Linux interface name, its subnet an IPv4 CIDR.
func (v *validator) bridge(c Client) {
	if n := c.BridgeNetworkName; n != "" && (len(n) > 15 || strings.ContainsAny(n, "/: \t")) {
		v.errorf("client.bridge_network_name", "client.bridge_network_name must be an interface name of at most 15 characters without '/', ':' or spaces (got %q)", n)
	}
	if s := c.BridgeNetworkSubnet; s != "" {
		if p, err := netip.ParsePrefix(s); err != nil || !p.Addr().Is4() || p.Bits() > 30 {
			v.errorf("client.bridge_network_subnet", "client.bridge_network_subnet must be an IPv4 CIDR of at least 4 addresses such as \"172.26.64.0/20\" (got %q)", s)
		}
	}
}
