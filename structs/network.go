package structs

// NetworkResource is a group's (or task's) network block.
type NetworkResource struct {
	Mode          string `json:",omitempty"`
	Device        string `json:",omitempty"`
	CIDR          string `json:",omitempty"`
	IP            string `json:",omitempty"`
	Hostname      string `json:",omitempty"`
	ReservedPorts []Port `json:",omitempty"`
	DynamicPorts  []Port `json:",omitempty"`
}

// Port is one labelled port. Value is the host port (static, or assigned on
// placement for dynamic ports); To is the port the task listens on, when it
// differs.
type Port struct {
	Label       string
	Value       int
	To          int
	HostNetwork string `json:",omitempty"`
}

// DefaultHostNetwork is the one host network of a drover client, as
// Nomad names a node's default network: a port may name it or none.
const DefaultHostNetwork = "default"

// Copy returns a deep copy.
func (n *NetworkResource) Copy() *NetworkResource {
	if n == nil {
		return nil
	}
	c := *n
	c.ReservedPorts = copySlice(n.ReservedPorts)
	c.DynamicPorts = copySlice(n.DynamicPorts)
	return &c
}

func copyNetworks(in []*NetworkResource) []*NetworkResource {
	if in == nil {
		return nil
	}
	out := make([]*NetworkResource, len(in))
	for i, n := range in {
		out[i] = n.Copy()
	}
	return out
}

// Dynamic port range, as Nomad's defaults.
const (
	DefaultMinDynamicPort = 20000
	DefaultMaxDynamicPort = 32000
)

// PortMapping is a port assigned to an allocation.
type PortMapping struct {
	Label  string
	Value  int
	To     int
	HostIP string
}
