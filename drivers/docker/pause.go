package docker

import (
	"context"
	"errors"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/droverhq/drover/drivers"
)

// A group in "bridge" mode with a docker task has its network namespace
// made by the docker driver, as Nomad's: a pause container of the
// infra_image, with network mode "none" (a namespace with only its
// loopback), holds it; the client configures it through CNI (the
// allocation's eth0, its address on the "nomad" bridge, its ports
// mapped); the docker tasks join it with network mode
// "container:<pause ID>" and the other drivers' tasks join its path.
// The pause container is named nomad_init_<alloc ID>, as Nomad's, and
// labelled like the tasks' containers, so that a restarted client finds
// it again (CreateNetwork) and ReapOrphans removes one whose allocation
// is gone.

// PauseNamePrefix begins the name of every pause container.
const PauseNamePrefix = "nomad_init_"

// PauseName is the name of an allocation's pause container.
func PauseName(allocID string) string { return PauseNamePrefix + allocID }

// pauseStopTimeout is how long a pause container has to exit on SIGTERM
// before it is killed (Nomad's: one second).
const pauseStopTimeout = 1

// CreateNetwork makes the allocation's pause container and returns its
// namespace; a pause container of the allocation that already runs (a
// restarted client) is returned as it is, created false. One that has
// stopped is replaced.
func (d *Driver) CreateNetwork(ctx context.Context, req *drivers.NetworkRequest) (*drivers.NetworkSandbox, bool, error) {
	if req == nil || req.AllocID == "" {
		return nil, false, fmt.Errorf("%w: a network needs an allocation ID", drivers.ErrInvalidConfig)
	}
	if d.clientErr != nil {
		return nil, false, fmt.Errorf("failed to connect to docker daemon: %w", d.clientErr)
	}
	name := PauseName(req.AllocID)
	ictx, cancel := context.WithTimeout(ctx, callTimeout)
	c, err := d.client.ContainerInspect(ictx, name)
	cancel()
	switch {
	case cerrdefs.IsNotFound(err):
	case err != nil:
		return nil, false, fmt.Errorf("inspecting pause container %s: %w", name, err)
	case c.Config == nil || c.Config.Labels[LabelNodeID] != req.NodeID:
		return nil, false, fmt.Errorf("a container named %s exists that this node did not start", name)
	case c.State != nil && c.State.Running && c.NetworkSettings != nil && c.NetworkSettings.SandboxKey != "":
		return &drivers.NetworkSandbox{ContainerID: c.ID, NetNSPath: c.NetworkSettings.SandboxKey}, false, nil
	default:
		d.logger.Info("replacing a pause container that is not running", "container", name)
		if err := d.removePause(ctx, c.ID); err != nil {
			return nil, false, err
		}
	}
	if err := d.ensureInfraImage(ctx); err != nil {
		return nil, false, err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	created, err := d.client.ContainerCreate(cctx, &container.Config{Image: d.opts.InfraImage, Labels: pauseLabels(req)}, &container.HostConfig{
		NetworkMode: "none",
		// As Nomad's: the pause container runs until the client stops it.
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyUnlessStopped},
		LogConfig:     container.LogConfig{Type: "none"},
	}, nil, nil, name)
	if err != nil {
		return nil, false, fmt.Errorf("creating pause container %s: %w", name, err)
	}
	fail := func(err error) (*drivers.NetworkSandbox, bool, error) {
		if rerr := d.removePause(context.WithoutCancel(ctx), created.ID); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, false, err
	}
	if err := d.client.ContainerStart(cctx, created.ID, container.StartOptions{}); err != nil {
		return fail(fmt.Errorf("starting pause container %s: %w", name, err))
	}
	// Until it has started, inspect gives no sandbox.
	c, err = d.client.ContainerInspect(cctx, created.ID)
	if err != nil {
		return fail(fmt.Errorf("inspecting pause container %s: %w", name, err))
	}
	if c.NetworkSettings == nil || c.NetworkSettings.SandboxKey == "" {
		return fail(fmt.Errorf("pause container %s has no network namespace", name))
	}
	d.logger.Debug("started pause container", "container", name, "netns", c.NetworkSettings.SandboxKey)
	return &drivers.NetworkSandbox{ContainerID: c.ID, NetNSPath: c.NetworkSettings.SandboxKey}, true, nil
}

// DestroyNetwork stops and removes the allocation's pause container, if
// this node has one; there being none is no error.
func (d *Driver) DestroyNetwork(ctx context.Context, allocID, nodeID string) error {
	if allocID == "" {
		return fmt.Errorf("%w: a network needs an allocation ID", drivers.ErrInvalidConfig)
	}
	if d.clientErr != nil {
		return fmt.Errorf("failed to connect to docker daemon: %w", d.clientErr)
	}
	name := PauseName(allocID)
	ictx, cancel := context.WithTimeout(ctx, callTimeout)
	c, err := d.client.ContainerInspect(ictx, name)
	cancel()
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("inspecting pause container %s: %w", name, err)
	}
	if c.Config == nil || c.Config.Labels[LabelNodeID] != nodeID {
		d.logger.Warn("not removing a pause container this node did not start", "container", name)
		return nil
	}
	return d.removePause(ctx, c.ID)
}

// removePause stops a pause container (SIGTERM, then SIGKILL after
// pauseStopTimeout) and removes it.
func (d *Driver) removePause(ctx context.Context, id string) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	t := pauseStopTimeout
	if err := d.client.ContainerStop(cctx, id, container.StopOptions{Timeout: &t}); err != nil && !cerrdefs.IsNotFound(err) {
		d.logger.Warn("stopping pause container", "container", shortID(id), "error", err)
	}
	err := d.client.ContainerRemove(cctx, id, container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("removing pause container %s: %w", shortID(id), err)
	}
	return nil
}

// pauseLabels are the labels of the tasks' containers, without a task.
func pauseLabels(req *drivers.NetworkRequest) map[string]string {
	return map[string]string{
		LabelAllocID: req.AllocID, LabelJobID: req.JobID, LabelJobName: req.JobName,
		LabelNamespace: req.Namespace, LabelGroup: req.TaskGroup,
		LabelNodeName: req.NodeName, LabelNodeIDNmd: req.NodeID, LabelNodeID: req.NodeID,
	}
}
