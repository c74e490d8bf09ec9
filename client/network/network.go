// Package network gives an allocation in bridge mode its own network
// namespace, as Nomad's client does: one namespace per allocation,
// created by the client and bound under /var/run/netns (as `ip netns
// add` does), wired to the host's "nomad" bridge by the CNI plugins of
// cni_path (loopback, bridge with host-local IPAM, firewall, portmap),
// with the group's ports mapped from the host into the namespace. In a
// group with a docker task the namespace is not the manager's own but the
// one docker's pause container holds (SetupIn): the manager configures
// it and removes its network, and leaves the namespace to the driver.
//
// A Manager keeps one record per allocation in its state directory,
// written before anything is created, so that a client that restarts
// after a crash re-attaches to the namespaces of the allocations that
// still run and removes the others (Reconcile) with their addresses and
// iptables rules.
package network

import (
	"errors"
	"strings"
)

// Sentinel errors, wrapped with context.
var (
	// ErrPluginMissing: a CNI plugin of the bridge network is in none of
	// the cni_path directories.
	ErrPluginMissing = errors.New("CNI plugin not found")
	// ErrPortInUse: a host port the allocation maps is already bound on
	// the host by something else.
	ErrPortInUse = errors.New("host port already in use")
	// ErrSetup: a CNI plugin failed to add the allocation's network.
	ErrSetup = errors.New("setting up the allocation's network")
	// ErrNotFound: the manager holds no network for the allocation.
	ErrNotFound = errors.New("no network for the allocation")
)

// Defaults, as Nomad's client (Debian's containernetworking-plugins
// installs its plugins in /usr/lib/cni, which is searched after Nomad's
// own two directories).
const (
	DefaultCNIPath      = "/opt/cni/bin:/usr/libexec/cni:/usr/lib/cni"
	DefaultCNIConfigDir = "/opt/cni/config"
	DefaultBridgeName   = "nomad"
	DefaultSubnet       = "172.26.64.0/20"
	// NetworkName is the name of the generated network (Nomad's): the
	// host-local allocator keeps its leases under it.
	NetworkName = "nomad"
	// AdminChain is the iptables chain the firewall plugin jumps to
	// first, where the client accepts traffic to the bridge's subnet.
	AdminChain = "NOMAD-ADMIN"
	// IfName is the allocation's interface in its namespace.
	IfName = "eth0"
	// DefaultNetNSDir is where namespaces are bound, as `ip netns`.
	DefaultNetNSDir = "/var/run/netns"
	// IPAMDataDir is where host-local keeps its leases (Nomad's, on
	// tmpfs: a reboot frees them).
	IPAMDataDir = "/var/run/cni"
)

// Config is the client's bridge networking configuration.
type Config struct {
	// CNIPath lists the directories searched for plugins (cni_path).
	CNIPath []string
	// ConfigDir holds operators' CNI network configurations
	// (cni_config_dir).
	ConfigDir string
	// BridgeName is the host bridge (bridge_network_name).
	BridgeName string
	// Subnet is the allocations' IPv4 subnet (bridge_network_subnet).
	Subnet string
	// HairpinMode lets an allocation reach itself through its mapped
	// host ports (bridge_network_hairpin_mode).
	HairpinMode bool
	// StateDir holds the manager's records, one per allocation.
	StateDir string
	// NetNSDir is where namespaces are bound (DefaultNetNSDir).
	NetNSDir string
	// CacheDir is libcni's cache of results (empty: libcni's default,
	// /var/lib/cni).
	CacheDir string
}

// SplitPath splits a cni_path value on colons, dropping empty parts.
func SplitPath(p string) []string {
	var out []string
	for _, d := range strings.Split(p, ":") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// withDefaults fills c's empty fields.
func (c Config) withDefaults() Config {
	if len(c.CNIPath) == 0 {
		c.CNIPath = SplitPath(DefaultCNIPath)
	}
	if c.ConfigDir == "" {
		c.ConfigDir = DefaultCNIConfigDir
	}
	if c.BridgeName == "" {
		c.BridgeName = DefaultBridgeName
	}
	if c.Subnet == "" {
		c.Subnet = DefaultSubnet
	}
	if c.NetNSDir == "" {
		c.NetNSDir = DefaultNetNSDir
	}
	return c
}

// Port is one host port mapped into an allocation's namespace.
type Port struct {
	Label string
	// HostIP and HostPort are where the host accepts connections;
	// ContainerPort is where the task listens in the namespace.
	HostIP        string `json:",omitempty"`
	HostPort      int
	ContainerPort int
}

// Status is an allocation's network as its tasks see it.
type Status struct {
	// NetNSPath is the namespace tasks join.
	NetNSPath string
	// InterfaceName and Address are the allocation's interface in the
	// namespace and its IPv4 address.
	InterfaceName string
	Address       string
}
