package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/droverhq/drover/client/network"
	"github.com/droverhq/drover/client/taskenv"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// Networks gives allocations of bridge groups their network namespace
// (client/network.Manager). Calls for one allocation never overlap.
type Networks interface {
	// Setup makes the allocation's namespace, its ports mapped.
	Setup(ctx context.Context, allocID string, ports []network.Port) (*network.Status, error)
	// SetupIn configures a namespace a driver made (docker's pause
	// container) for the allocation, its ports mapped; Teardown leaves
	// the namespace itself to its maker.
	SetupIn(ctx context.Context, allocID, netns string, ports []network.Port) (*network.Status, error)
	// Status returns the namespace a previous Setup made, if it exists.
	Status(allocID string) (*network.Status, error)
	// Teardown removes it (no error when there is none).
	Teardown(ctx context.Context, allocID string) error
}

// networkTimeout bounds one setup or teardown of a namespace.
const networkTimeout = 30 * time.Second

// createNetworkTimeout bounds a driver's making of the namespace, which
// may pull its image first (docker's infra_image, within its own
// infra_image_pull_timeout, 5 minutes by default).
const createNetworkTimeout = 6 * time.Minute

// clientBridge reports whether the group's network is the client's
// bridge (through CNI): every "bridge" group, whatever its drivers, as
// Nomad's. A group with a docker task has its namespace made by the
// docker driver (a pause container), the others by the client.
func clientBridge(tg *structs.TaskGroup) bool {
	return tg.NetworkMode() == "bridge"
}

// networkInitiator is the driver that makes the group's namespace, as
// Nomad's network manager picks it: that of the first task whose driver
// must initiate the network (drivers.NetworkInitiator: docker); nil when
// no task's does, and the client makes it.
func (ar *AllocRunner) networkInitiator() drivers.NetworkInitiator {
	for _, t := range ar.group.Tasks {
		if ni, ok := ar.cfg.Drivers[t.Driver].(drivers.NetworkInitiator); ok {
			return ni
		}
	}
	return nil
}

func (ar *AllocRunner) nodeID() string {
	if ar.cfg.Node == nil {
		return ""
	}
	return ar.cfg.Node.ID
}

// bridgePorts are the allocation's ports as the namespace maps them: the
// host's port to the task's "to" port (the host port itself when the
// group gives none).
func bridgePorts(a *structs.Allocation) []network.Port {
	if a.AllocatedResources == nil {
		return nil
	}
	var out []network.Port
	for _, p := range a.AllocatedResources.Shared.Ports {
		if p.To < 0 {
			continue // to = -1: not mapped, as Nomad's
		}
		to := p.To
		if to == 0 {
			to = p.Value
		}
		out = append(out, network.Port{Label: p.Label, HostIP: p.HostIP, HostPort: p.Value, ContainerPort: to})
	}
	return out
}

// setupNetwork gives the allocation its namespace before any task is
// created, as Nomad's network hook: a restarted client re-attaches to
// the namespace its predecessor made while the allocation ran; else a
// new one is made (after removing what a namespace gone missing left).
// In a group with a docker task the docker driver makes the namespace
// (setupDriverNetwork).
func (ar *AllocRunner) setupNetwork(restoring bool) error {
	nets := ar.cfg.Networks
	if nets == nil {
		return fmt.Errorf("bridge networking is not available on this client")
	}
	if ni := ar.networkInitiator(); ni != nil {
		return ar.setupDriverNetwork(ni)
	}
	id := ar.cfg.Alloc.ID
	if restoring {
		if st, err := nets.Status(id); err == nil {
			ar.net = st
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), networkTimeout)
	defer cancel()
	if err := nets.Teardown(ctx, id); err != nil {
		return fmt.Errorf("removing the allocation's previous network: %w", err)
	}
	st, err := nets.Setup(ctx, id, bridgePorts(ar.cfg.Alloc))
	if err != nil {
		return fmt.Errorf("failed to configure networking for alloc: %w", err)
	}
	ar.net = st
	return nil
}

// setupDriverNetwork has the driver make the allocation's namespace (or
// find the one it made before: a restarted client re-attaches to the
// pause container its predecessor started, whose namespace the running
// tasks are in) and configures it through CNI, unless the client's
// record shows it configured already. A pause container found with no
// matching record (a client stopped half-way) is configured afresh and,
// should that fail, replaced once.
func (ar *AllocRunner) setupDriverNetwork(ni drivers.NetworkInitiator) error {
	nets, a := ar.cfg.Networks, ar.cfg.Alloc
	ctx, cancel := context.WithTimeout(context.Background(), createNetworkTimeout+2*networkTimeout)
	defer cancel()
	req := &drivers.NetworkRequest{
		AllocID: a.ID, JobID: a.JobID, JobName: a.Job.Name, Namespace: a.Job.Namespace, TaskGroup: a.TaskGroup, NodeID: ar.nodeID(),
	}
	if n := ar.cfg.Node; n != nil {
		req.NodeName = n.Name
	}
	sb, created, err := ni.CreateNetwork(ctx, req)
	if err != nil {
		return fmt.Errorf("failed to create network for alloc: %w", err)
	}
	if !created {
		if st, err := nets.Status(a.ID); err == nil && st.NetNSPath == sb.NetNSPath {
			ar.net, ar.netInit, ar.sandbox = st, ni, sb
			return nil
		}
	}
	for attempt := 0; ; attempt++ {
		st, err := ar.configureNetNS(ctx, sb.NetNSPath)
		if err == nil {
			ar.net, ar.netInit, ar.sandbox = st, ni, sb
			return nil
		}
		if derr := ni.DestroyNetwork(context.WithoutCancel(ctx), a.ID, ar.nodeID()); derr != nil {
			err = errors.Join(err, fmt.Errorf("removing the pause container: %w", derr))
		}
		if created || attempt > 0 {
			return err
		}
		if sb, created, err = ni.CreateNetwork(ctx, req); err != nil {
			return fmt.Errorf("failed to create network for alloc: %w", err)
		}
	}
}

// configureNetNS removes any network the client configured for the
// allocation before and configures the namespace at netns.
func (ar *AllocRunner) configureNetNS(ctx context.Context, netns string) (*network.Status, error) {
	nets, id := ar.cfg.Networks, ar.cfg.Alloc.ID
	if err := nets.Teardown(ctx, id); err != nil {
		return nil, fmt.Errorf("removing the allocation's previous network: %w", err)
	}
	st, err := nets.SetupIn(ctx, id, netns, bridgePorts(ar.cfg.Alloc))
	if err != nil {
		return nil, fmt.Errorf("failed to configure networking for alloc: %w", err)
	}
	return st, nil
}

// teardownNetwork removes the allocation's namespace once its tasks are
// all dead (not when the client detaches from running tasks): its CNI
// network, then the pause container of a driver-made one, as Nomad's.
func (ar *AllocRunner) teardownNetwork() {
	if (ar.net == nil && !ar.netLeft) || ar.cfg.Networks == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), networkTimeout)
	defer cancel()
	if err := ar.cfg.Networks.Teardown(ctx, ar.cfg.Alloc.ID); err != nil && ar.cfg.OnNetworkError != nil {
		ar.cfg.OnNetworkError(err)
	}
	if ar.netInit != nil {
		if err := ar.netInit.DestroyNetwork(ctx, ar.cfg.Alloc.ID, ar.nodeID()); err != nil && ar.cfg.OnNetworkError != nil {
			ar.cfg.OnNetworkError(err)
		}
	}
}

// allocNetwork is the namespace's address for the tasks' environment.
func (ar *AllocRunner) allocNetwork() *taskenv.AllocNetwork {
	if ar.net == nil {
		return nil
	}
	return &taskenv.AllocNetwork{InterfaceName: ar.net.InterfaceName, Address: ar.net.Address}
}

// failSetup marks every task dead and failed with a Setup Failure event
// giving the reason, as Nomad's client does when a hook that runs before
// the tasks fails: the allocation fails without running a task.
func (ar *AllocRunner) failSetup(err error) {
	msg := fmt.Sprintf("failed to setup alloc: pre-run hook \"network\" failed: %v", err)
	now := ar.cfg.Clock.Now()
	for _, t := range ar.group.Tasks {
		ar.states[t.Name] = &structs.TaskState{
			State: structs.TaskStateDead, Failed: true, FinishedAt: now,
			Events: []*structs.TaskEvent{{Type: structs.TaskSetupFailure, Time: now.UnixNano(), Message: msg, DisplayMessage: msg}},
		}
	}
}

// dockerBridgeBefore reports whether a restored allocation of a bridge
// group runs its docker tasks on Docker's own bridge, as clients before
// the pause container did for groups of docker tasks only: handles of
// running tasks, none of them in a namespace. Such an allocation keeps
// running as it was, without a namespace, until it is replaced (its
// containers hold its host ports).
func dockerBridgeBefore(tg *structs.TaskGroup, prev *persisted) bool {
	running := 0
	for _, t := range tg.Tasks {
		pt := prev.Tasks[t.Name]
		if pt == nil || pt.Handle == nil || pt.Handle.Config == nil || (pt.State != nil && pt.State.State == structs.TaskStateDead) {
			continue
		}
		if t.Driver != structs.DriverDocker || pt.Handle.Config.NetNSPath != "" {
			return false
		}
		running++
	}
	return running > 0
}

// allDead reports whether a restored allocation has no task left to run
// (every one dead before the client stopped): it needs no namespace.
func allDead(tg *structs.TaskGroup, prev *persisted) bool {
	for _, t := range tg.Tasks {
		pt := prev.Tasks[t.Name]
		if pt == nil || pt.State == nil || pt.State.State != structs.TaskStateDead {
			return false
		}
	}
	return true
}
