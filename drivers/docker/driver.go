// Package docker is the docker driver: it runs a task as a container
// through the Docker Engine API (github.com/docker/docker/client), never
// through the docker CLI. A task's container is named "<task>-<alloc ID>"
// and labelled with Nomad's labels and the client node's ID; its output is
// streamed into the task's log files (logs.go); its exit code, and
// whether the kernel killed it for memory, come from the daemon.
//
// Containers outlive the client: a restarted client re-attaches to its
// containers from their IDs (Recover) and removes those of its node that
// no allocation owns any more (ReapOrphans). A stopped container is kept
// until its task runner destroys it, so that its exit code is known even
// when it ended while no client watched.
package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"
	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// Name is the driver's name.
const Name = structs.DriverDocker

// Bounds on calls to the daemon.
const (
	// DefaultPingTimeout bounds the fingerprint's ping.
	DefaultPingTimeout = 5 * time.Second
	// callTimeout bounds one short call (inspect, create, start, kill,
	// remove, list).
	callTimeout = 30 * time.Second
	// logDrain bounds how long an exit waits for the last output.
	logDrain = 5 * time.Second
)

// Options tune the driver.
type Options struct {
	// Endpoint is the daemon's address ("unix:///var/run/docker.sock",
	// "tcp://host:2375"). Empty: DOCKER_HOST (with DOCKER_TLS_VERIFY and
	// DOCKER_CERT_PATH), else the default socket.
	Endpoint string
	// VolumesEnabled lets tasks bind host paths outside their allocation
	// directory and use named volumes (Nomad's docker.volumes.enabled).
	VolumesEnabled bool
	// PingTimeout bounds the fingerprint's ping (DefaultPingTimeout).
	PingTimeout time.Duration
	// InfraImage is the image of the pause containers that hold bridge
	// allocations' network namespaces (Nomad's infra_image; empty:
	// DefaultInfraImage, built on this host when missing). See pause.go.
	InfraImage string
	// InfraImagePullTimeout bounds the pull of an InfraImage that is not
	// the default (DefaultInfraImagePullTimeout).
	InfraImagePullTimeout time.Duration
	Logger                hclog.Logger
}

// Driver is the docker driver. Create it with New.
type Driver struct {
	opts      Options
	client    *client.Client
	clientErr error
	logger    hclog.Logger

	// ctx ends when the driver is closed; every goroutine follows it.
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	tasks map[string]*task

	// infraMu serialises the making of the pause image (pause_image.go).
	infraMu sync.Mutex
}

var (
	_ drivers.Driver           = (*Driver)(nil)
	_ drivers.Capable          = (*Driver)(nil)
	_ drivers.OrphanReaper     = (*Driver)(nil)
	_ drivers.NetworkInitiator = (*Driver)(nil)
)

// New returns a docker driver. It does not contact the daemon: the
// fingerprint says whether one answers.
func New(o Options) *Driver {
	if o.PingTimeout <= 0 {
		o.PingTimeout = DefaultPingTimeout
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.InfraImage == "" {
		o.InfraImage = DefaultInfraImage
	}
	if o.InfraImagePullTimeout <= 0 {
		o.InfraImagePullTimeout = DefaultInfraImagePullTimeout
	}
	copts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if o.Endpoint != "" {
		copts = append(copts, client.WithHost(o.Endpoint))
	}
	d := &Driver{opts: o, logger: o.Logger.Named(Name), tasks: make(map[string]*task)}
	d.client, d.clientErr = client.NewClientWithOpts(copts...)
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d
}

// Close stops following the driver's containers (their output and their
// exit) and closes the connection to the daemon; the containers keep
// running. A client that stops without stopping its tasks leaves them
// this way, for the next client to re-attach to.
func (d *Driver) Close() error {
	d.cancel()
	d.mu.Lock()
	ts := make([]*task, 0, len(d.tasks))
	for _, t := range d.tasks {
		ts = append(ts, t)
	}
	d.mu.Unlock()
	for _, t := range ts {
		<-t.done
	}
	if d.client != nil {
		return d.client.Close()
	}
	return nil
}

// handleState is the docker driver's part of a TaskHandle.
type handleState struct {
	ContainerID   string
	ContainerName string
	Image         string
}

// task is one container the driver follows.
type task struct {
	containerID string
	exit        drivers.ExitNotifier
	// done closes when the driver has stopped following the container
	// (it exited and its output is drained, or the driver was closed).
	done chan struct{}
}

// Name returns "docker".
func (d *Driver) Name() string { return Name }

// Capabilities: tasks run in an image of their own.
func (d *Driver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{FSIsolation: drivers.FSIsolationImage}
}

// Fingerprint pings the daemon. It reports driver.docker = "1" and the
// daemon's version when it answers; otherwise the driver is undetected
// and no docker task is placed on the node.
func (d *Driver) Fingerprint() drivers.Fingerprint {
	if d.clientErr != nil {
		return drivers.Fingerprint{Undetected: true, HealthDescription: "Docker client: " + d.clientErr.Error()}
	}
	ctx, cancel := context.WithTimeout(d.ctx, d.opts.PingTimeout)
	defer cancel()
	ping, err := d.client.Ping(ctx)
	if err != nil {
		return drivers.Fingerprint{
			Undetected:        true,
			HealthDescription: fmt.Sprintf("Failed to connect to docker daemon at %s: %v", d.client.DaemonHost(), err),
		}
	}
	v, err := d.client.ServerVersion(ctx)
	if err != nil {
		return drivers.Fingerprint{HealthDescription: "Failed to read the docker daemon's version: " + err.Error()}
	}
	attrs := map[string]string{
		"driver.docker":         "1",
		"driver.docker.version": v.Version,
	}
	if os := ping.OSType; os != "" {
		attrs["driver.docker.os_type"] = os
	} else if v.Os != "" {
		attrs["driver.docker.os_type"] = v.Os
	}
	if d.opts.VolumesEnabled {
		attrs["driver.docker.volumes.enabled"] = "true"
	}
	return drivers.Fingerprint{Attributes: attrs, Healthy: true, HealthDescription: "Healthy"}
}

// Start makes sure the image is there (pulling it only when it is
// missing, or always with force_pull, within image_pull_timeout),
// creates the container and starts it.
func (d *Driver) Start(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: no task config", drivers.ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dc, errs := structs.ParseDockerConfig(cfg.Config)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("%w: %s", drivers.ErrInvalidConfig, strings.Join(msgs, "; "))
	}
	if d.clientErr != nil {
		return nil, fmt.Errorf("%w: docker client: %w", drivers.ErrStartFailed, d.clientErr)
	}
	id := drivers.TaskID(cfg.AllocID, cfg.TaskName)
	d.mu.Lock()
	if old, ok := d.tasks[id]; ok {
		if _, done := old.exit.Result(); !done {
			d.mu.Unlock()
			return nil, fmt.Errorf("%w: task %s is already running", drivers.ErrStartFailed, id)
		}
	}
	d.mu.Unlock()
	sp, err := buildSpec(cfg, dc, d.opts.VolumesEnabled)
	if err != nil {
		return nil, err
	}
	if err := d.ensureImage(ctx, dc); err != nil {
		return nil, fmt.Errorf("%w: %w", drivers.ErrStartFailed, err)
	}
	if err := d.removeStale(ctx, sp.name, cfg.NodeID); err != nil {
		return nil, fmt.Errorf("%w: %w", drivers.ErrStartFailed, err)
	}
	logs, err := openTaskLogs(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: opening logs: %w", drivers.ErrStartFailed, err)
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	created, err := d.client.ContainerCreate(cctx, sp.config, sp.host, nil, nil, sp.name)
	if err != nil {
		closeLogs(logs)
		return nil, fmt.Errorf("%w: creating container %s: %w", drivers.ErrStartFailed, sp.name, err)
	}
	if err := d.client.ContainerStart(cctx, created.ID, container.StartOptions{}); err != nil {
		d.remove(created.ID)
		closeLogs(logs)
		return nil, fmt.Errorf("%w: starting container %s: %w", drivers.ErrStartFailed, sp.name, err)
	}
	h := &drivers.TaskHandle{Version: drivers.HandleVersion, Driver: Name, Config: cfg, StartedAt: time.Now()}
	if err := h.SetDriverState(handleState{ContainerID: created.ID, ContainerName: sp.name, Image: dc.Image}); err != nil {
		d.remove(created.ID)
		closeLogs(logs)
		return nil, err
	}
	d.track(id, created.ID, logs, time.Time{})
	return h, nil
}

func closeLogs(l *taskLogs) {
	if l != nil {
		l.close()
	}
}

// ensureImage pulls the image when it is missing or force_pull asks, and
// fails with the reason when the pull fails or outlasts
// image_pull_timeout.
func (d *Driver) ensureImage(ctx context.Context, dc *structs.DockerConfig) error {
	ictx, cancel := context.WithTimeout(ctx, callTimeout)
	_, err := d.client.ImageInspect(ictx, dc.Image)
	cancel()
	switch {
	case err == nil && !dc.ForcePull:
		return nil
	case err != nil && !cerrdefs.IsNotFound(err):
		return fmt.Errorf("inspecting image %q: %w", dc.Image, err)
	}
	pctx, cancel := context.WithTimeout(ctx, dc.ImagePullTimeout)
	defer cancel()
	why := "it is not present on this node"
	if err == nil {
		why = "force_pull is set"
	}
	err = d.pull(pctx, dc.Image, dc.Auth)
	if err != nil && dc.Auth != nil && dc.AuthSoftFail && authRefused(err) && pctx.Err() == nil {
		// As Nomad's auth_soft_fail: carry on without the credentials.
		// The password is never logged.
		d.logger.Warn("registry refused the image's credentials; pulling without them (auth_soft_fail)",
			"image", dc.Image, "username", dc.Auth.Username, "error", err)
		err = d.pull(pctx, dc.Image, nil)
	}
	if err != nil {
		if pctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			err = fmt.Errorf("no progress within image_pull_timeout %s", dc.ImagePullTimeout)
		}
		return fmt.Errorf("failed to pull image %q (%s): %w", dc.Image, why, err)
	}
	return nil
}

// pull pulls the image, with auth's credentials in the X-Registry-Auth
// header when auth is set.
func (d *Driver) pull(ctx context.Context, ref string, auth *structs.DockerAuth) error {
	var opts image.PullOptions
	if auth != nil {
		enc, err := registry.EncodeAuthConfig(registry.AuthConfig{
			Username: auth.Username, Password: auth.Password, Email: auth.Email, ServerAddress: auth.ServerAddress,
		})
		if err != nil {
			return err
		}
		opts.RegistryAuth = enc
	}
	rc, err := d.client.ImagePull(ctx, ref, opts)
	if err != nil {
		return err
	}
	defer rc.Close()
	// The pull runs as long as its progress stream is read; an error in
	// the stream is the pull's.
	return pullErr(rc)
}

// authRefused reports whether a pull failed on its credentials.
func authRefused(err error) bool {
	if cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err) {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "unauthorized") || strings.Contains(s, "authentication required") || strings.Contains(s, "denied")
}

// pullErr reads a pull's progress stream (one JSON message after
// another) to its end and returns the error it reports, if any.
func pullErr(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if m.ErrorDetail.Message != "" {
			return errors.New(m.ErrorDetail.Message)
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
	}
}

// removeStale removes a container left under the task's name by an
// earlier attempt of this node. A container of that name that is not
// this node's is an error: drover does not touch it.
func (d *Driver) removeStale(ctx context.Context, name, nodeID string) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	c, err := d.client.ContainerInspect(cctx, name)
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("inspecting container %s: %w", name, err)
	}
	if c.Config == nil || c.Config.Labels[LabelNodeID] != nodeID {
		return fmt.Errorf("a container named %s exists that this node did not start", name)
	}
	d.mu.Lock()
	for _, t := range d.tasks {
		if t.containerID == c.ID {
			d.mu.Unlock()
			return fmt.Errorf("container %s of this task is still followed", name)
		}
	}
	d.mu.Unlock()
	d.logger.Info("removing a container left by an earlier attempt", "container", name)
	if err := d.client.ContainerRemove(cctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("removing container %s: %w", name, err)
	}
	return nil
}

// remove force-removes a container, with its anonymous volumes.
func (d *Driver) remove(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	err := d.client.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		d.logger.Warn("removing container", "container", id, "error", err)
	}
}

// Recover re-attaches to the container a handle names. A container that
// still runs is followed again; one that has exited meanwhile is
// followed too, and Wait reports its real exit code at once. A container
// that no longer exists is ErrTaskNotFound.
func (d *Driver) Recover(h *drivers.TaskHandle) error {
	if err := drivers.CheckHandle(h, Name); err != nil {
		return err
	}
	id := h.ID()
	d.mu.Lock()
	_, known := d.tasks[id]
	d.mu.Unlock()
	if known {
		return nil
	}
	var st handleState
	if err := h.GetDriverState(&st); err != nil || st.ContainerID == "" {
		return fmt.Errorf("%w: handle has no container ID: %v", drivers.ErrInvalidConfig, err)
	}
	if d.clientErr != nil {
		return fmt.Errorf("docker client: %w", d.clientErr)
	}
	ctx, cancel := context.WithTimeout(d.ctx, callTimeout)
	defer cancel()
	c, err := d.client.ContainerInspect(ctx, st.ContainerID)
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf("%w: container %s of %s no longer exists", drivers.ErrTaskNotFound, st.ContainerName, id)
	}
	if err != nil {
		return fmt.Errorf("inspecting container %s of %s: %w", st.ContainerName, id, err)
	}
	logs, err := openTaskLogs(h.Config)
	if err != nil {
		return fmt.Errorf("re-opening logs of %s: %w", id, err)
	}
	var since time.Time
	if logs != nil {
		since = logs.lastWrite()
	}
	if c.State != nil && !c.State.Running {
		d.logger.Info("re-attached to a container that exited meanwhile", "container", st.ContainerName, "exit_code", c.State.ExitCode)
	}
	d.track(id, c.ID, logs, since)
	return nil
}

// track registers a container and follows its output and its exit.
func (d *Driver) track(id, containerID string, logs *taskLogs, since time.Time) {
	t := &task{containerID: containerID, done: make(chan struct{})}
	d.mu.Lock()
	d.tasks[id] = t
	d.mu.Unlock()
	go d.run(t, logs, since)
}

// run follows one container until it exits: its output into the log
// files, then its exit result (after the last output, bounded by
// logDrain).
func (d *Driver) run(t *task, logs *taskLogs, since time.Time) {
	defer close(t.done)
	exited := make(chan struct{})
	drained := make(chan struct{})
	if logs != nil {
		go func() {
			defer close(drained)
			d.follow(d.ctx, t.containerID, logs, since, exited)
		}()
	} else {
		close(drained)
	}
	res, ok := d.waitExit(t.containerID)
	close(exited)
	if ok {
		select {
		case <-drained:
		case <-time.After(logDrain):
		}
	} else {
		<-drained
	}
	closeLogs(logs)
	if ok {
		t.exit.Exit(res)
	}
}

// waitExit waits for the container to stop and returns how it ended; ok
// is false when the driver was closed first. A broken wait (the daemon
// restarting) is retried; a container that disappears is an error.
func (d *Driver) waitExit(id string) (drivers.ExitResult, bool) {
	backoff := 250 * time.Millisecond
	for {
		wch, ech := d.client.ContainerWait(d.ctx, id, container.WaitConditionNotRunning)
		var err error
		select {
		case w := <-wch:
			res := drivers.ExitResult{ExitCode: int(w.StatusCode)}
			if w.Error != nil && w.Error.Message != "" {
				res.Err = errors.New(w.Error.Message)
			}
			ctx, cancel := context.WithTimeout(d.ctx, callTimeout)
			c, ierr := d.client.ContainerInspect(ctx, id)
			cancel()
			if ierr == nil && c.State != nil {
				res.OOMKilled = c.State.OOMKilled
				res.ExitCode = c.State.ExitCode
				if res.OOMKilled {
					// As Nomad's docker driver: the kill is the exit's
					// error, which the Terminated event shows.
					res.Err = errors.New("OOM Killed")
				}
			}
			return res, true
		case err = <-ech:
		}
		if d.ctx.Err() != nil {
			return drivers.ExitResult{}, false
		}
		if cerrdefs.IsNotFound(err) {
			return drivers.ExitResult{ExitCode: -1, Err: fmt.Errorf("container %s disappeared: %w", shortID(id), err)}, true
		}
		d.logger.Debug("waiting for container", "container", shortID(id), "error", err)
		select {
		case <-d.ctx.Done():
			return drivers.ExitResult{}, false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Wait returns a channel that receives the task's exit result.
func (d *Driver) Wait(h *drivers.TaskHandle) (<-chan drivers.ExitResult, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, err
	}
	return t.exit.Wait(), nil
}

// Stop sends signal (default: the task's kill_signal, else SIGTERM) to
// the container, waits up to timeout, then kills it with SIGKILL. It
// returns once the container has stopped.
func (d *Driver) Stop(h *drivers.TaskHandle, timeout time.Duration, signal string) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	return drivers.StopGracefully(h.ID(), h, t.exit.Wait(), timeout, signal, func(sig syscall.Signal) error {
		return d.kill(t.containerID, int(sig))
	})
}

// kill signals a container; one that is not running (or gone) is fine.
func (d *Driver) kill(id string, sig int) error {
	ctx, cancel := context.WithTimeout(d.ctx, callTimeout)
	defer cancel()
	err := d.client.ContainerKill(ctx, id, strconv.Itoa(sig))
	if err == nil || cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) {
		return nil
	}
	return err
}

// Destroy kills the container if it still runs, removes it and forgets
// the task.
func (d *Driver) Destroy(h *drivers.TaskHandle) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	if _, done := t.exit.Result(); !done {
		if err := d.Stop(h, 0, "SIGKILL"); err != nil {
			return err
		}
	}
	d.remove(t.containerID)
	d.mu.Lock()
	if d.tasks[h.ID()] == t {
		delete(d.tasks, h.ID())
	}
	d.mu.Unlock()
	return nil
}

func (d *Driver) lookup(h *drivers.TaskHandle) (*task, error) {
	return drivers.Lookup(&d.mu, d.tasks, h, Name)
}

// ReapOrphans removes the containers labelled with nodeID whose
// allocation the client does not own and that the driver does not
// follow: containers of allocations that were stopped or collected while
// the client was down.
func (d *Driver) ReapOrphans(ctx context.Context, nodeID string, owned func(allocID string) bool) ([]string, error) {
	if d.clientErr != nil {
		return nil, d.clientErr
	}
	if nodeID == "" {
		return nil, errors.New("reaping orphans needs the node's ID")
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	list, err := d.client.ContainerList(cctx, container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", LabelNodeID+"="+nodeID)),
	})
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	followed := map[string]bool{}
	d.mu.Lock()
	for _, t := range d.tasks {
		followed[t.containerID] = true
	}
	d.mu.Unlock()
	var removed []string
	var errs []error
	for _, c := range list {
		if c.Labels[LabelNodeID] != nodeID || followed[c.ID] || owned(c.Labels[LabelAllocID]) {
			continue
		}
		name := c.ID
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		err := d.client.ContainerRemove(cctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("removing %s: %w", name, err))
			continue
		}
		d.logger.Info("removed a container no allocation owns", "container", name, "alloc_id", c.Labels[LabelAllocID])
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}
