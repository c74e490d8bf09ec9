package structs

import "time"

// Node statuses, as Nomad's.
const (
	NodeStatusInit  = "initializing"
	NodeStatusReady = "ready"
	NodeStatusDown  = "down"
	// NodeStatusDisconnected: the node missed its heartbeats but runs
	// allocations whose group tolerates it for a while
	// (disconnect.lost_after); they are "unknown" until the node comes
	// back or the time is up, when the node goes down.
	NodeStatusDisconnected = "disconnected"
)

// Scheduling eligibility.
const (
	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// Node is a client machine that runs allocations.
type Node struct {
	ID                string
	Name              string
	Datacenter        string
	NodeClass         string
	NodePool          string
	HTTPAddr          string
	Attributes        map[string]string
	Meta              map[string]string
	NodeResources     *NodeResources
	ReservedResources *NodeReservedResources
	Drivers           map[string]*DriverInfo
	// HostVolumes are the host volumes the client offers, by name.
	HostVolumes map[string]*ClientHostVolumeConfig `json:",omitempty"`
	// Drain is set while DrainStrategy is (Nomad's older field).
	Drain bool
	// DrainStrategy is the node's drain in progress, nil when none.
	DrainStrategy         *DrainStrategy
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	StatusUpdatedAt       int64
	// Events are the node's latest changes (MaxRetainedNodeEvents),
	// oldest first.
	Events []*NodeEvent
	// LastDrain describes the latest drain, nil if the node never drained.
	LastDrain *DrainMetadata
	// SecretHash is HashSecret of the node's secret, which its client
	// presents on every call to the servers (X-Nomad-Token). Never part
	// of the JSON shape; the state keeps only the hash.
	SecretHash string `json:"-" codec:"SecretHash"`
	// SecretID is Nomad's field for the secret, answered empty as Nomad
	// answers it: the secret itself is never kept. Not replicated.
	SecretID    string `codec:"-"`
	CreateIndex uint64
	ModifyIndex uint64
}

// Ready reports whether the node can take new allocations.
func (n *Node) Ready() bool {
	return n != nil && n.Status == NodeStatusReady && !n.Drain &&
		n.SchedulingEligibility != NodeSchedulingIneligible
}

// Copy returns a deep copy.
func (n *Node) Copy() *Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Attributes = copyMap(n.Attributes)
	c.Meta = copyMap(n.Meta)
	c.HostVolumes = copyHostVolumes(n.HostVolumes)
	c.DrainStrategy = n.DrainStrategy.Copy()
	c.LastDrain = n.LastDrain.Copy()
	if n.Events != nil {
		c.Events = make([]*NodeEvent, len(n.Events))
		for i, e := range n.Events {
			c.Events[i] = e.Copy()
		}
	}
	if n.NodeResources != nil {
		r := *n.NodeResources
		r.Networks = copyNetworks(n.NodeResources.Networks)
		c.NodeResources = &r
	}
	if n.ReservedResources != nil {
		r := *n.ReservedResources
		c.ReservedResources = &r
	}
	if n.Drivers != nil {
		c.Drivers = make(map[string]*DriverInfo, len(n.Drivers))
		for k, v := range n.Drivers {
			d := *v
			d.Attributes = copyMap(v.Attributes)
			c.Drivers[k] = &d
		}
	}
	return &c
}

// Capacity returns what the node offers for allocations, less reservations.
func (n *Node) Capacity() ComparableResources {
	var c ComparableResources
	if n.NodeResources != nil {
		c.CPU = n.NodeResources.Cpu.CpuShares
		c.MemoryMB = n.NodeResources.Memory.MemoryMB
		c.DiskMB = n.NodeResources.Disk.DiskMB
	}
	if r := n.ReservedResources; r != nil {
		c.CPU -= int64(r.Cpu.CpuShares)
		c.MemoryMB -= int64(r.Memory.MemoryMB)
		c.DiskMB -= int64(r.Disk.DiskMB)
	}
	return c
}

// NodeResources is what a node has.
type NodeResources struct {
	Cpu            NodeCpuResources
	Memory         NodeMemoryResources
	Disk           NodeDiskResources
	Networks       []*NetworkResource `json:",omitempty"`
	MinDynamicPort int
	MaxDynamicPort int
}

// NodeCpuResources is CPU in MHz.
type NodeCpuResources struct {
	CpuShares     int64
	TotalCpuCores uint16
}

// NodeMemoryResources is memory in MB.
type NodeMemoryResources struct{ MemoryMB int64 }

// NodeDiskResources is disk in MB.
type NodeDiskResources struct{ DiskMB int64 }

// NodeReservedResources is held back from scheduling.
type NodeReservedResources struct {
	Cpu      NodeReservedCpuResources
	Memory   NodeReservedMemoryResources
	Disk     NodeReservedDiskResources
	Networks NodeReservedNetworkResources
}

// NodeReservedCpuResources is reserved CPU in MHz.
type NodeReservedCpuResources struct{ CpuShares uint64 }

// NodeReservedMemoryResources is reserved memory in MB.
type NodeReservedMemoryResources struct{ MemoryMB uint64 }

// NodeReservedDiskResources is reserved disk in MB.
type NodeReservedDiskResources struct{ DiskMB uint64 }

// NodeReservedNetworkResources lists host ports held back, e.g. "22,80".
type NodeReservedNetworkResources struct{ ReservedHostPorts string }

// DriverInfo is a driver's state on a node.
type DriverInfo struct {
	Attributes        map[string]string
	Detected          bool
	Healthy           bool
	HealthDescription string
	UpdateTime        time.Time
}

// NodeListStub is the summary /v1/nodes returns.
type NodeListStub struct {
	Address               string
	ID                    string
	Attributes            map[string]string `json:",omitempty"`
	Datacenter            string
	Name                  string
	NodeClass             string
	NodePool              string
	Version               string
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	Drivers               map[string]*DriverInfo
	// NodeResources and ReservedResources are answered with
	// ?resources=true only (StubWithResources), as Nomad's.
	NodeResources     *NodeResources         `json:",omitempty"`
	ReservedResources *NodeReservedResources `json:",omitempty"`
	LastDrain         *DrainMetadata
	CreateIndex       uint64
	ModifyIndex       uint64
}

// StubWithResources is Stub with the node's resources and what it
// reserves (nothing, when it reserves nothing), for ?resources=true.
func (n *Node) StubWithResources() *NodeListStub {
	s := n.Stub()
	c := n.Copy()
	s.NodeResources, s.ReservedResources = c.NodeResources, c.ReservedResources
	if s.ReservedResources == nil {
		s.ReservedResources = &NodeReservedResources{}
	}
	return s
}

// Stub returns the list form of the node.
func (n *Node) Stub() *NodeListStub {
	return &NodeListStub{
		Address: n.Attributes["unique.network.ip-address"], ID: n.ID,
		Datacenter: n.Datacenter, Name: n.Name, NodeClass: n.NodeClass,
		NodePool: n.NodePool, Version: n.Attributes["nomad.version"], Drain: n.Drain,
		SchedulingEligibility: n.SchedulingEligibility, Status: n.Status,
		StatusDescription: n.StatusDescription, Drivers: n.Drivers, LastDrain: n.LastDrain,
		CreateIndex: n.CreateIndex, ModifyIndex: n.ModifyIndex,
	}
}
