// Package drivers defines the contract between the client's task runners
// and the task drivers (raw_exec, docker, mock), and the types that cross
// it.
//
// Drivers import only domain types; they never reach servers. A driver's
// TaskHandle is plain JSON so that the client can persist it and re-attach
// to a task after the client itself restarts.
package drivers

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/droverhq/drover/structs"
)

// Sentinel errors drivers return, wrapped with context.
var (
	// ErrTaskNotFound: the handle names no task this driver knows of, or
	// (from Recover) the task no longer exists.
	ErrTaskNotFound = errors.New("task not found")
	// ErrInvalidConfig: the task's driver config is missing or malformed.
	ErrInvalidConfig = errors.New("invalid driver config")
	// ErrWrongDriver: the handle belongs to another driver.
	ErrWrongDriver = errors.New("handle belongs to another driver")
	// ErrStartFailed: the driver could not start the task.
	ErrStartFailed = errors.New("task failed to start")
)

// Driver runs tasks. All methods are safe for concurrent use; a task runner
// calls them from its own goroutine.
type Driver interface {
	// Name is the driver's name as jobs write it ("raw_exec").
	Name() string
	// Fingerprint reports the driver's node attributes
	// ("driver.raw_exec" = "1") and whether it can run tasks.
	Fingerprint() Fingerprint
	// Start launches a task and returns its handle once it runs. Start
	// honours ctx while it waits (for example a mock's start_delay).
	Start(ctx context.Context, cfg *TaskConfig) (*TaskHandle, error)
	// Wait returns a channel that receives the task's exit result once,
	// then is closed. Many callers may wait on one task.
	Wait(h *TaskHandle) (<-chan ExitResult, error)
	// Stop signals the task (signal name, "" for the task's kill signal)
	// and, if it has not exited within timeout, kills it. Stop returns
	// once the task is gone.
	Stop(h *TaskHandle, timeout time.Duration, signal string) error
	// Recover re-attaches to a task from a persisted handle, without
	// starting it again. It returns an error wrapping ErrTaskNotFound if
	// the task is gone.
	Recover(h *TaskHandle) error
	// Destroy kills what is left of the task and forgets it.
	Destroy(h *TaskHandle) error
}

// Fingerprint is what a driver reports of itself to the node.
type Fingerprint struct {
	Attributes        map[string]string
	Healthy           bool
	HealthDescription string
	// Undetected: what the driver needs is absent (no Docker daemon
	// answers), as Nomad reports it. The node lists the driver as not
	// detected; its attributes are not set.
	Undetected bool
}

// File system isolation of a driver's tasks, as Nomad names it.
const (
	// FSIsolationNone: the task sees the client's file system; its
	// environment holds host paths and the client's own variables.
	FSIsolationNone = "none"
	// FSIsolationImage: the task runs in an image of its own (a
	// container); the allocation's directories are mounted at /alloc,
	// /local and /secrets, and the client's variables stay outside.
	FSIsolationImage = "image"
	// FSIsolationChroot: the task runs in a root of its own built in its
	// task directory from host directories (exec); the allocation's
	// directories are at /alloc, /local and /secrets, and the client's
	// variables stay outside, as for FSIsolationImage.
	FSIsolationChroot = "chroot"
)

// Capabilities is what a driver tells the client about how its tasks run.
type Capabilities struct {
	FSIsolation string
}

// Capable is implemented by drivers whose capabilities differ from
// raw_exec's (FSIsolationNone).
type Capable interface {
	Capabilities() Capabilities
}

// CapabilitiesOf returns d's capabilities, FSIsolationNone by default.
func CapabilitiesOf(d Driver) Capabilities {
	if c, ok := d.(Capable); ok {
		return c.Capabilities()
	}
	return Capabilities{FSIsolation: FSIsolationNone}
}

// OrphanReaper is implemented by drivers whose tasks outlive the client
// in a daemon of their own (docker): after a restarted client has
// re-created its allocations, it calls ReapOrphans once, before it
// starts any new task, so that the driver removes the tasks it started
// for this node (nodeID) that no allocation of the client owns any more.
// owned reports whether the client still runs the allocation; it may be
// called concurrently. ReapOrphans returns what it removed, by name.
type OrphanReaper interface {
	ReapOrphans(ctx context.Context, nodeID string, owned func(allocID string) bool) ([]string, error)
}

// TaskConfig is everything a driver needs to start one task, already
// interpolated by the client.
type TaskConfig struct {
	AllocID  string
	TaskName string
	// The task's job, group and node, for drivers that label what they
	// start (docker); empty in handles persisted before they existed.
	JobID     string `json:",omitempty"`
	JobName   string `json:",omitempty"`
	Namespace string `json:",omitempty"`
	TaskGroup string `json:",omitempty"`
	NodeID    string `json:",omitempty"`
	NodeName  string `json:",omitempty"`
	// TaskDir is the task's working directory; its local/ and secrets/
	// are NOMAD_TASK_DIR and NOMAD_SECRETS_DIR.
	TaskDir string
	// AllocDir is the group's shared directory (NOMAD_ALLOC_DIR).
	AllocDir string `json:",omitempty"`
	// Ports are the allocation's ports (host port Value, task port To);
	// NetworkMode is the group network's mode ("host" or "bridge").
	Ports       []structs.PortMapping `json:",omitempty"`
	NetworkMode string                `json:",omitempty"`
	// NetNSPath, in a bridge group (networked through CNI), is the
	// allocation's network namespace: the driver starts the task in it.
	// Empty otherwise (the host's network).
	NetNSPath string `json:",omitempty"`
	// NetworkContainerID is the container that owns NetNSPath when a
	// driver made the namespace (NetworkInitiator: docker's pause
	// container); docker tasks join it with network mode
	// "container:<ID>". Empty otherwise.
	NetworkContainerID string `json:",omitempty"`
	// User is the task's user; drivers that cannot switch users ignore
	// it (raw_exec runs as the client's user).
	User string `json:",omitempty"`
	// Env is the task's full environment.
	Env map[string]string
	// Config is the task's driver block.
	Config    map[string]any
	Resources *structs.AllocatedTaskResources `json:",omitempty"`
	// StdoutPath and StderrPath are the log file bases: files are named
	// base + ".0", ".1", … (for example "alloc/logs/web.stdout.0").
	StdoutPath string
	StderrPath string
	LogConfig  structs.LogConfig
	// KillTimeout and KillSignal are the task's defaults for Stop.
	KillTimeout time.Duration
	KillSignal  string
	// Mounts are the task's volume_mount blocks, resolved to the client's
	// host volumes. Drivers with filesystem isolation bind them; raw_exec
	// ignores them, as Nomad's (its task sees the host's filesystem).
	Mounts []MountConfig `json:",omitempty"`
}

// MountConfig is one host path a task sees at TaskPath.
type MountConfig struct {
	TaskPath string
	HostPath string
	Readonly bool
}

// HandleVersion is the version of the TaskHandle encoding.
const HandleVersion = 1

// TaskHandle identifies a running task. It is JSON-serialisable: the
// client persists it and hands it to Recover after a restart.
type TaskHandle struct {
	Version   int
	Driver    string
	Config    *TaskConfig
	StartedAt time.Time
	// DriverState is the driver's own re-attach data (PID, start time…).
	DriverState json.RawMessage
}

// ID returns the task's identity within the client: alloc ID and task name.
func (h *TaskHandle) ID() string {
	if h == nil || h.Config == nil {
		return ""
	}
	return TaskID(h.Config.AllocID, h.Config.TaskName)
}

// TaskID joins an alloc ID and a task name into a task's identity.
func TaskID(allocID, task string) string { return allocID + "/" + task }

// SetDriverState encodes v into the handle's DriverState.
func (h *TaskHandle) SetDriverState(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h.DriverState = b
	return nil
}

// GetDriverState decodes the handle's DriverState into v.
func (h *TaskHandle) GetDriverState(v any) error {
	if len(h.DriverState) == 0 {
		return errors.New("handle has no driver state")
	}
	return json.Unmarshal(h.DriverState, v)
}

// ExitResult is how a task ended.
type ExitResult struct {
	ExitCode int
	// Signal is the number of the signal that ended the task, or 0.
	Signal    int
	OOMKilled bool
	// Unknown is set when the driver re-attached to the task and could
	// not learn its exit status (a process that is not the client's child
	// cannot be waited for); ExitCode and Signal are then meaningless.
	Unknown bool
	// Err is a driver error while waiting, if any.
	Err error `json:"-"`
}

// Successful reports whether the task exited 0, without a signal, and with
// a known status.
func (r ExitResult) Successful() bool {
	return !r.Unknown && r.Err == nil && r.ExitCode == 0 && r.Signal == 0
}
