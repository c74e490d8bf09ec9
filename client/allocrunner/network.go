package allocrunner

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/client/network"
	"github.com/droverhq/drover/client/taskenv"
	"github.com/droverhq/drover/structs"
)

// Networks gives allocations of bridge groups their network namespace
// (client/network.Manager). Calls for one allocation never overlap.
type Networks interface {
	// Setup makes the allocation's namespace, its ports mapped.
	Setup(ctx context.Context, allocID string, ports []network.Port) (*network.Status, error)
	// Status returns the namespace a previous Setup made, if it exists.
	Status(allocID string) (*network.Status, error)
	// Teardown removes it (no error when there is none).
	Teardown(ctx context.Context, allocID string) error
}

// networkTimeout bounds one setup or teardown of a namespace.
const networkTimeout = 30 * time.Second

// clientBridge reports whether the group's network is the client's own
// bridge (through CNI): a "bridge" group with a task that is not a
// docker task. A group of docker tasks uses Docker's bridge.
func clientBridge(tg *structs.TaskGroup) bool {
	return tg.NetworkMode() == "bridge" && !tg.BridgeByDocker()
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
func (ar *AllocRunner) setupNetwork(restoring bool) error {
	nets := ar.cfg.Networks
	if nets == nil {
		return fmt.Errorf("bridge networking is not available on this client")
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

// teardownNetwork removes the allocation's namespace once its tasks are
// all dead (not when the client detaches from running tasks).
func (ar *AllocRunner) teardownNetwork() {
	if ar.net == nil || ar.cfg.Networks == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), networkTimeout)
	defer cancel()
	if err := ar.cfg.Networks.Teardown(ctx, ar.cfg.Alloc.ID); err != nil && ar.cfg.OnNetworkError != nil {
		ar.cfg.OnNetworkError(err)
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
