package drivers

import "context"

// NetworkRequest is what the client tells a driver that initiates an
// allocation's network (NetworkInitiator): the allocation, for the
// names and labels of what the driver makes.
type NetworkRequest struct {
	AllocID   string
	JobID     string
	JobName   string
	Namespace string
	TaskGroup string
	NodeID    string
	NodeName  string
}

// NetworkSandbox is an allocation's network namespace as a driver made
// it: the path every task of the allocation joins (and that the client
// configures through CNI), and the container that owns it.
type NetworkSandbox struct {
	// ContainerID is the container that holds the namespace (docker's
	// pause container); the driver's own tasks join it.
	ContainerID string
	// NetNSPath is the namespace's path on the host.
	NetNSPath string
}

// NetworkInitiator is implemented by drivers whose tasks cannot join a
// namespace the client made and so make the allocation's namespace
// themselves, as Nomad's drivers with MustInitiateNetwork (docker: a
// pause container with network mode "none"). In a group in "bridge"
// mode with a task of such a driver, the client asks that driver for the
// namespace before any task runs, configures it through CNI, and gives
// its path to every task (TaskConfig.NetNSPath, and the owner in
// TaskConfig.NetworkContainerID).
type NetworkInitiator interface {
	// CreateNetwork makes the allocation's namespace, or finds the one
	// made before (a restarted client): created is false then, and the
	// namespace is the one the allocation's running tasks are in.
	CreateNetwork(ctx context.Context, req *NetworkRequest) (sb *NetworkSandbox, created bool, err error)
	// DestroyNetwork removes the allocation's namespace (its container);
	// none is no error.
	DestroyNetwork(ctx context.Context, allocID, nodeID string) error
}
