package client

import (
	"errors"
	"fmt"
	"github.com/droverhq/drover/client/template"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/client/network"
	"github.com/droverhq/drover/client/taskrunner"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/docker"
	"github.com/droverhq/drover/drivers/exec"
	"github.com/droverhq/drover/drivers/java"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/drivers/rawexec"
	"github.com/droverhq/drover/structs"
)

// Sentinel errors.
var (
	// ErrInvalidConfig: the agent's Config is unusable.
	ErrInvalidConfig = errors.New("invalid client config")
	// ErrNodeUnknown: the servers do not know this node (a heartbeat was
	// answered 404); the agent registers again.
	ErrNodeUnknown = errors.New("node unknown to the servers")
)

// Defaults.
const (
	DefaultDatacenter = "dc1"
	// DefaultAllocWait bounds one blocking query for the node's allocs.
	DefaultAllocWait = 5 * time.Minute
	// DefaultRetryInterval is the first pause after a failed call to the
	// servers; it doubles up to MaxRetryInterval.
	DefaultRetryInterval = time.Second
	// MaxRetryInterval caps the pause between retries.
	MaxRetryInterval = 30 * time.Second
	// DefaultVersion is reported when Config.Version is empty.
	DefaultVersion = "0.1.0-dev"
)

// Config is what an Agent needs. Only DataDir and one of Servers or
// ServerAPI are required.
type Config struct {
	// DataDir holds the node ID (client/node-id) and the allocations
	// (alloc/<id>/).
	DataDir string
	// NodeName defaults to the host name.
	NodeName string
	// Datacenter defaults to "dc1", NodePool to "default".
	Datacenter string
	NodeClass  string
	NodePool   string
	Meta       map[string]string
	// Servers are the servers' HTTP addresses; the agent fails over
	// between them.
	Servers []string
	// ServerAPI, when set, is used instead of HTTP to Servers.
	ServerAPI ServerAPI
	// Drivers default to raw_exec, exec, java, docker, mock and
	// mock_driver (the mock driver as Nomad names its own); exec is
	// usable where it can isolate tasks (root, cgroups, namespaces), java
	// there too with a JVM, docker when its fingerprint finds a daemon.
	Drivers []drivers.Driver
	// DisableRawExec makes the default raw_exec driver report itself as
	// not detected and refuse tasks: the agent's default outside -dev
	// unless its configuration enables raw_exec, as Nomad's.
	DisableRawExec bool
	// Exec configures the default exec driver (Nomad's client chroot_env
	// and plugin "exec" block); its StateDir defaults to exec/ under
	// DataDir, where a restarted client finds its tasks again.
	Exec exec.Options
	// Java configures the default java driver (the client's chroot_env
	// and plugin "java" block); its StateDir defaults to java/ under
	// DataDir.
	Java exec.Options
	// Options are Nomad's client options ("key" = "value"). The default
	// docker driver reads docker.endpoint (the daemon's address, else
	// DOCKER_HOST, else the default socket) and docker.volumes.enabled
	// (bind host paths and named volumes; false by default).
	Options map[string]string
	Logger  hclog.Logger
	// Clock drives heartbeats, retries and the task runners.
	Clock clock.Clock
	// CPUTotalMHz and MemoryTotalMB, when positive, replace what the
	// machine reports.
	CPUTotalMHz   int64
	MemoryTotalMB int64
	// MinDynamicPort and MaxDynamicPort bound dynamic ports (20000-32000).
	MinDynamicPort int
	MaxDynamicPort int
	// Version is reported as nomad.version and drover.version.
	Version string
	// HTTPAddr is the host:port of the agent's HTTP API that serves this
	// client's endpoints (logs); registered as the node's HTTPAddr.
	HTTPAddr string
	// HostEnv is the lowest layer of every task's environment; it
	// defaults to the client's PATH.
	HostEnv map[string]string
	// ArtifactLimits is the agent's client artifact block (nil: Nomad's
	// defaults).
	ArtifactLimits *taskrunner.ArtifactLimits
	// HostVolumes are the client's host_volume blocks, by name: reported
	// on the node (Node.HostVolumes) and mounted into tasks that ask.
	// Each path must be an existing directory.
	HostVolumes map[string]*structs.ClientHostVolumeConfig
	// AllocWait bounds one blocking query (DefaultAllocWait).
	AllocWait time.Duration
	// RetryInterval is the first pause after a failed call to the servers
	// (DefaultRetryInterval).
	RetryInterval time.Duration
	// IntroToken is a client introduction token the node presents when it
	// registers (Nomad's client intro_token; see node_identity.go).
	IntroToken string
	// Jobs shares decoded jobs among the agent's allocations; agents of
	// many nodes in one process may share one. Defaults to a cache of
	// the agent's own.
	Jobs *JobCache
	// Templates are the client's template settings (the agent's
	// client { template { … } } block); zero fields take Nomad's defaults.
	Templates template.Settings
	// TemplateServerAddr, when set, is where tasks' templates read
	// Nomad's API; by default the server the agent's calls go to.
	TemplateServerAddr string
	// Bridge is the client's bridge networking through CNI (Nomad's
	// cni_path, cni_config_dir, bridge_network_name,
	// bridge_network_subnet and bridge_network_hairpin_mode); zero
	// fields take Nomad's defaults (client/network), and its records are
	// kept in network/ under DataDir.
	Bridge network.Config
	// DockerInfraImage and DockerInfraImagePullTimeout are the docker
	// driver's pause image and the bound on its pull (Nomad's docker
	// plugin infra_image and infra_image_pull_timeout; empty and zero:
	// the driver's defaults, drivers/docker/pause_image.go).
	DockerInfraImage            string
	DockerInfraImagePullTimeout time.Duration
	// TemplateIdentity, when set, gives the token of each task's
	// templates; by default the server API's, when it has one
	// (template.IdentitySource), asked as the node; else none.
	TemplateIdentity template.IdentitySource
}

// withDefaults checks c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.DataDir == "" {
		return c, errors.Join(ErrInvalidConfig, errors.New("data dir required"))
	}
	if c.ServerAPI == nil && len(c.Servers) == 0 {
		return c, errors.Join(ErrInvalidConfig, errors.New("at least one server address required"))
	}
	if c.NodeName == "" {
		c.NodeName, _ = os.Hostname()
		if c.NodeName == "" {
			c.NodeName = "drover-client"
		}
	}
	if c.Datacenter == "" {
		c.Datacenter = DefaultDatacenter
	}
	if c.NodePool == "" {
		c.NodePool = structs.DefaultNodePool
	}
	for name, hv := range c.HostVolumes {
		if fi, err := os.Stat(hv.Path); err != nil || !fi.IsDir() {
			return c, errors.Join(ErrInvalidConfig, fmt.Errorf("host_volume %q: path %q is not a directory on this host", name, hv.Path))
		}
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Drivers == nil {
		do, err := dockerOptions(c.Options, c.Logger)
		if err != nil {
			return c, err
		}
		do.InfraImage, do.InfraImagePullTimeout = c.DockerInfraImage, c.DockerInfraImagePullTimeout
		eo := c.Exec
		if eo.StateDir == "" {
			eo.StateDir = filepath.Join(c.DataDir, "exec")
		}
		ed, err := exec.New(eo)
		if err != nil {
			return c, errors.Join(ErrInvalidConfig, err)
		}
		jo := c.Java
		if jo.StateDir == "" {
			jo.StateDir = filepath.Join(c.DataDir, "java")
		}
		jd, err := java.New(java.Options{Options: jo})
		if err != nil {
			return c, errors.Join(ErrInvalidConfig, err)
		}
		c.Drivers = []drivers.Driver{rawexec.New(rawexec.Options{Disabled: c.DisableRawExec}), ed, jd, docker.New(do), mock.New(mock.Options{Clock: c.Clock}), mock.New(mock.Options{Clock: c.Clock, Nomad: true})}
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.HostEnv == nil {
		c.HostEnv = map[string]string{}
		if p := os.Getenv("PATH"); p != "" {
			c.HostEnv["PATH"] = p
		}
	}
	if c.Jobs == nil {
		c.Jobs = NewJobCache()
	}
	if c.AllocWait <= 0 {
		c.AllocWait = DefaultAllocWait
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = DefaultRetryInterval
	}
	if c.Bridge.StateDir == "" {
		c.Bridge.StateDir = filepath.Join(c.DataDir, "network")
	}
	return c, nil
}

// Client options the docker driver reads, as Nomad's.
const (
	OptionDockerEndpoint       = "docker.endpoint"
	OptionDockerVolumesEnabled = "docker.volumes.enabled"
)

// dockerOptions reads the docker driver's client options.
func dockerOptions(opts map[string]string, logger hclog.Logger) (docker.Options, error) {
	o := docker.Options{Endpoint: opts[OptionDockerEndpoint], Logger: logger}
	if v, ok := opts[OptionDockerVolumesEnabled]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return o, errors.Join(ErrInvalidConfig, fmt.Errorf("option %s must be true or false (got %q)", OptionDockerVolumesEnabled, v))
		}
		o.VolumesEnabled = b
	}
	return o, nil
}
