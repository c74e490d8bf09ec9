package network

import (
	"encoding/json"
	"fmt"
	"net/netip"
)

// BridgeConf is what the generated bridge network depends on.
type BridgeConf struct {
	BridgeName  string
	Subnet      string
	HairpinMode bool
}

// Validate checks the bridge's name and subnet, naming the client
// configuration field at fault.
func (b BridgeConf) Validate() error {
	if b.BridgeName == "" || len(b.BridgeName) > 15 {
		return fmt.Errorf("bridge_network_name: %q must be 1 to 15 characters (a Linux interface name)", b.BridgeName)
	}
	for _, r := range b.BridgeName {
		if r == '/' || r == ' ' || r == ':' {
			return fmt.Errorf("bridge_network_name: %q may not hold %q", b.BridgeName, r)
		}
	}
	p, err := netip.ParsePrefix(b.Subnet)
	if err != nil || !p.Addr().Is4() {
		return fmt.Errorf("bridge_network_subnet: %q is not an IPv4 CIDR (such as %s)", b.Subnet, DefaultSubnet)
	}
	if p.Bits() > 30 {
		return fmt.Errorf("bridge_network_subnet: %q is too small (at most /30)", b.Subnet)
	}
	return nil
}

// Plugins are the plugin types the bridge network runs, in order.
var Plugins = []string{"loopback", "bridge", "host-local", "firewall", "portmap"}

// Conflist is the CNI configuration list of the bridge network: the
// loopback; the bridge, the allocations' gateway, masquerading their
// traffic, with host-local addresses from the subnet and a default
// route; the firewall plugin (iptables, with AdminChain); and portmap,
// which maps host ports (with SNAT, so that the host itself can reach
// them on 127.0.0.1). It is Nomad's network, of CNI version 0.4.0.
func Conflist(b BridgeConf) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	type ipRange struct {
		Subnet string `json:"subnet"`
	}
	type route struct {
		Dst string `json:"dst"`
	}
	type ipam struct {
		Type    string      `json:"type"`
		Ranges  [][]ipRange `json:"ranges"`
		Routes  []route     `json:"routes"`
		DataDir string      `json:"dataDir"`
	}
	list := struct {
		CNIVersion string `json:"cniVersion"`
		Name       string `json:"name"`
		Plugins    []any  `json:"plugins"`
	}{
		CNIVersion: "0.4.0",
		Name:       NetworkName,
		Plugins: []any{
			map[string]any{"type": "loopback"},
			struct {
				Type         string `json:"type"`
				Bridge       string `json:"bridge"`
				IPMasq       bool   `json:"ipMasq"`
				IsGateway    bool   `json:"isGateway"`
				ForceAddress bool   `json:"forceAddress"`
				HairpinMode  bool   `json:"hairpinMode"`
				IPAM         ipam   `json:"ipam"`
			}{
				Type: "bridge", Bridge: b.BridgeName, IPMasq: true, IsGateway: true, ForceAddress: true,
				HairpinMode: b.HairpinMode,
				IPAM: ipam{
					Type:    "host-local",
					Ranges:  [][]ipRange{{{Subnet: b.Subnet}}},
					Routes:  []route{{Dst: "0.0.0.0/0"}},
					DataDir: IPAMDataDir,
				},
			},
			map[string]any{"type": "firewall", "backend": "iptables", "iptablesAdminChainName": AdminChain},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}, "snat": true},
		},
	}
	return json.MarshalIndent(list, "", "\t")
}
