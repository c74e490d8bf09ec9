package docker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-connections/nat"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// Container labels, as Nomad's docker driver names them, and drover's
// own. Every container drover starts carries all of them; LabelNodeID
// marks it as drover's and says which client node owns it, so that a
// restarted client removes its own orphans and never another node's
// (several clients may share one daemon).
const (
	LabelAllocID   = "com.hashicorp.nomad.alloc_id"
	LabelJobID     = "com.hashicorp.nomad.job_id"
	LabelJobName   = "com.hashicorp.nomad.job_name"
	LabelNamespace = "com.hashicorp.nomad.namespace"
	LabelGroup     = "com.hashicorp.nomad.task_group_name"
	LabelTaskName  = "com.hashicorp.nomad.task_name"
	LabelNodeName  = "com.hashicorp.nomad.node_name"
	LabelNodeIDNmd = "com.hashicorp.nomad.node_id"
	LabelNodeID    = structs.DockerLabelPrefix + "node_id"
)

// Where the allocation's directories appear in every container, as in
// Nomad (NOMAD_ALLOC_DIR, NOMAD_TASK_DIR, NOMAD_SECRETS_DIR).
const (
	ContainerAllocDir   = "/alloc"
	ContainerTaskDir    = "/local"
	ContainerSecretsDir = "/secrets"
)

// errVolumesDisabled: a task asked for a host path or a named volume on
// a client that does not allow them.
var errVolumesDisabled = errors.New("host paths and named volumes are disabled on this client (client option docker.volumes.enabled)")

// spec is what Start asks the daemon to create.
type spec struct {
	name   string
	config *container.Config
	host   *container.HostConfig
}

// containerName is Nomad's: "<task>-<alloc ID>".
func containerName(cfg *drivers.TaskConfig) string {
	return cfg.TaskName + "-" + cfg.AllocID
}

// buildSpec turns a task into a container: image and command, the task's
// environment, labels, published ports, resources, the allocation's
// directories and the task's volumes. It is pure apart from reading the
// file system to resolve bind sources.
func buildSpec(cfg *drivers.TaskConfig, dc *structs.DockerConfig, volumesEnabled bool) (*spec, error) {
	c := &container.Config{
		Image:      dc.Image,
		Env:        envList(cfg.Env),
		Labels:     labels(cfg, dc),
		WorkingDir: dc.WorkDir,
		Hostname:   dc.Hostname,
		User:       cfg.User,
	}
	if dc.Command != "" {
		c.Cmd = append([]string{dc.Command}, dc.Args...)
	} else if len(dc.Args) > 0 {
		c.Cmd = append([]string(nil), dc.Args...)
	}
	if len(dc.Entrypoint) > 0 {
		c.Entrypoint = append([]string(nil), dc.Entrypoint...)
	}
	h := &container.HostConfig{
		NetworkMode:    container.NetworkMode(dc.NetworkMode),
		RestartPolicy:  container.RestartPolicy{Name: container.RestartPolicyDisabled},
		ReadonlyRootfs: dc.ReadonlyRootfs,
		LogConfig:      logConfig(cfg.LogConfig),
	}
	if dc.Init {
		yes := true
		h.Init = &yes
	}
	joined := false
	if h.NetworkMode == "" && cfg.NetworkContainerID != "" {
		// The group's bridge network: the pause container's namespace
		// (pause.go), whose ports the client maps itself. A task's own
		// network_mode keeps its own network, as Nomad's.
		if dc.Hostname != "" {
			return nil, fmt.Errorf("%w: hostname: a task cannot set its own in the group's bridge network (it shares the allocation's namespace)", drivers.ErrInvalidConfig)
		}
		h.NetworkMode = container.NetworkMode("container:" + cfg.NetworkContainerID)
		joined = true
	}
	if h.NetworkMode == "" {
		h.NetworkMode = "bridge"
	}
	if r := cfg.Resources; r != nil {
		mem := r.Memory.MemoryMB << 20
		switch {
		case r.Memory.MemoryMaxMB == structs.MemoryMaxUnlimited:
			// memory_max = -1: no hard limit, memory the reservation.
			h.MemoryReservation = mem
			mem = 0
		case r.Memory.MemoryMaxMB > r.Memory.MemoryMB:
			// memory_max is the hard limit, memory the reservation.
			h.MemoryReservation = mem
			mem = r.Memory.MemoryMaxMB << 20
		}
		h.Memory = mem
		h.MemorySwap = mem // no swap beyond the limit (0: none set)
		if r.Cpu.CpuShares > 0 {
			h.CPUShares = max(r.Cpu.CpuShares, 2) // Docker's minimum weight
		}
	}
	if !joined {
		if err := publishPorts(c, h, cfg, dc); err != nil {
			return nil, err
		}
	}
	if err := mounts(h, cfg, dc, volumesEnabled); err != nil {
		return nil, err
	}
	return &spec{name: containerName(cfg), config: c, host: h}, nil
}

func labels(cfg *drivers.TaskConfig, dc *structs.DockerConfig) map[string]string {
	out := make(map[string]string, len(dc.Labels)+9)
	for k, v := range dc.Labels {
		out[k] = v
	}
	for k, v := range map[string]string{
		LabelAllocID: cfg.AllocID, LabelJobID: cfg.JobID, LabelJobName: cfg.JobName,
		LabelNamespace: cfg.Namespace, LabelGroup: cfg.TaskGroup, LabelTaskName: cfg.TaskName,
		LabelNodeName: cfg.NodeName, LabelNodeIDNmd: cfg.NodeID, LabelNodeID: cfg.NodeID,
	} {
		out[k] = v
	}
	return out
}

// logConfig keeps the daemon's own copy of a container's output small:
// the driver streams it into the task's log files, which are what alloc
// logs reads.
func logConfig(lc structs.LogConfig) container.LogConfig {
	if lc.Disabled {
		return container.LogConfig{Type: "none"}
	}
	mb := lc.MaxFileSizeMB
	if mb < 1 {
		mb = structs.DefaultLogMaxFileMB
	}
	return container.LogConfig{Type: "json-file", Config: map[string]string{
		"max-size": strconv.Itoa(mb) + "m", "max-file": "2",
	}}
}

// publishPorts binds each published label's host port (the allocated
// Value, on the host IP the client uses) to its port in the container
// (To, or Value when To is 0), for TCP and UDP as Nomad does. A task
// publishes the labels in its ports list (a task in its group's bridge
// network publishes none: the client maps the group's ports). A task of
// a bridge group in no namespace and with no network_mode of its own
// was started by a client before the pause container, which ran such
// groups on Docker's bridge: restarted, it publishes every port of the
// group again, as then.
func publishPorts(c *container.Config, h *container.HostConfig, cfg *drivers.TaskConfig, dc *structs.DockerConfig) error {
	labels := dc.Ports
	if len(labels) == 0 && cfg.NetworkMode == "bridge" && dc.NetworkMode == "" && cfg.NetNSPath == "" {
		for _, p := range cfg.Ports {
			labels = append(labels, p.Label)
		}
	}
	if len(labels) == 0 {
		return nil
	}
	byLabel := make(map[string]structs.PortMapping, len(cfg.Ports))
	for _, p := range cfg.Ports {
		byLabel[p.Label] = p
	}
	c.ExposedPorts = nat.PortSet{}
	h.PortBindings = nat.PortMap{}
	for _, l := range labels {
		p, ok := byLabel[l]
		if !ok {
			return fmt.Errorf("%w: ports: %q is not a port of the allocation's network", drivers.ErrInvalidConfig, l)
		}
		inside := p.Value
		if p.To > 0 {
			inside = p.To
		}
		ip := p.HostIP
		if ip == "" {
			ip = "127.0.0.1"
		}
		for _, proto := range []string{"tcp", "udp"} {
			cp := nat.Port(strconv.Itoa(inside) + "/" + proto)
			c.ExposedPorts[cp] = struct{}{}
			h.PortBindings[cp] = append(h.PortBindings[cp], nat.PortBinding{HostIP: ip, HostPort: strconv.Itoa(p.Value)})
		}
	}
	return nil
}

// mounts binds the allocation's directories and the task's volumes and
// mount blocks. Bind sources must stay inside the allocation's directory
// unless the client enables volumes; named volumes need that too.
func mounts(h *container.HostConfig, cfg *drivers.TaskConfig, dc *structs.DockerConfig, volumesEnabled bool) error {
	if cfg.AllocDir != "" {
		h.Binds = append(h.Binds, cfg.AllocDir+":"+ContainerAllocDir)
	}
	if cfg.TaskDir != "" {
		h.Binds = append(h.Binds,
			filepath.Join(cfg.TaskDir, "local")+":"+ContainerTaskDir,
			filepath.Join(cfg.TaskDir, "secrets")+":"+ContainerSecretsDir)
	}
	// Host volumes (volume_mount): the client resolved them to paths it
	// offers in host_volume blocks, so they need no docker.volumes.enabled.
	for _, m := range cfg.Mounts {
		h.Mounts = append(h.Mounts, mount.Mount{Type: mount.TypeBind, Source: m.HostPath, Target: m.TaskPath, ReadOnly: m.Readonly})
	}
	for i, v := range dc.Volumes {
		src, dst, ro, err := structs.ParseDockerVolume(v)
		if err != nil {
			return fmt.Errorf("%w: volumes[%d] %v", drivers.ErrInvalidConfig, i, err)
		}
		host, hostRO, err := bindSource(cfg, src, volumesEnabled)
		if err != nil {
			return fmt.Errorf("volumes[%d]: %w", i, err)
		}
		b := host + ":" + dst
		if ro || hostRO {
			b += ":ro"
		}
		h.Binds = append(h.Binds, b)
	}
	for i, m := range dc.Mounts {
		mt := mount.Mount{Target: m.Target, ReadOnly: m.ReadOnly}
		switch m.Type {
		case structs.DockerMountBind:
			host, hostRO, err := bindSource(cfg, m.Source, volumesEnabled)
			if err != nil {
				return fmt.Errorf("mount[%d]: %w", i, err)
			}
			mt.Type, mt.Source, mt.ReadOnly = mount.TypeBind, host, m.ReadOnly || hostRO
		case structs.DockerMountVolume:
			if m.Source != "" && !volumesEnabled {
				return fmt.Errorf("mount[%d]: %w: named volume %q", i, errVolumesDisabled, m.Source)
			}
			mt.Type, mt.Source = mount.TypeVolume, m.Source
		case structs.DockerMountTmpfs:
			mt.Type = mount.TypeTmpfs
			if m.TmpfsSizeBytes > 0 || m.TmpfsMode > 0 {
				mt.TmpfsOptions = &mount.TmpfsOptions{SizeBytes: m.TmpfsSizeBytes, Mode: os.FileMode(m.TmpfsMode)}
			}
		default:
			return fmt.Errorf("%w: mount[%d] has type %q", drivers.ErrInvalidConfig, i, m.Type)
		}
		h.Mounts = append(h.Mounts, mt)
	}
	return nil
}

// bindSource resolves a bind source. Unless the client enables volumes,
// a source is resolved through allocfs, symlinks included, at the time
// the container is made: a relative one against the task's directory, an
// absolute one only inside the allocation's directory, and either is
// refused if it leads out of the allocation (a symlink that an artifact,
// this task or a sibling put in local/ or alloc/). The daemon is handed
// the resolved path, so it follows no link of the task's. The one other
// absolute source allowed is a host volume the task mounts (volume_mount,
// which the client resolved from its own host_volume blocks), named
// exactly, and read-only if its volume_mount is. A relative source that
// does not exist is made as a directory
// in the allocation (as docker -v would, but owned by the client).
func bindSource(cfg *drivers.TaskConfig, src string, volumesEnabled bool) (host string, ro bool, err error) {
	if volumesEnabled {
		// The operator lets jobs bind any host path.
		if filepath.IsAbs(src) {
			return filepath.Clean(src), false, nil
		}
		if cfg.TaskDir == "" {
			return "", false, fmt.Errorf("%w: relative source %q needs a task directory", drivers.ErrInvalidConfig, src)
		}
		host := filepath.Join(cfg.TaskDir, src)
		if _, err := os.Lstat(host); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(host, 0o755); err != nil {
				return "", false, err
			}
		}
		return host, false, nil
	}
	host = src
	if filepath.IsAbs(src) {
		host = filepath.Clean(src)
		for _, m := range cfg.Mounts {
			if host == filepath.Clean(m.HostPath) {
				return host, m.Readonly, nil
			}
		}
		if !within(host, allocRoot(cfg)) {
			return "", false, fmt.Errorf("%w: host path %q is outside the allocation's directory", errVolumesDisabled, src)
		}
	} else {
		if cfg.TaskDir == "" {
			return "", false, fmt.Errorf("%w: relative source %q needs a task directory", drivers.ErrInvalidConfig, src)
		}
		host = filepath.Join(cfg.TaskDir, src)
		if !within(host, allocRoot(cfg)) {
			return "", false, fmt.Errorf("%w: %q leaves the allocation's directory", errVolumesDisabled, src)
		}
	}
	root, err := allocfs.Open(allocRoot(cfg))
	if err != nil {
		return "", false, err
	}
	defer root.Close()
	refused := func(err error) error {
		if errors.Is(err, allocfs.ErrEscapes) {
			return fmt.Errorf("%w: %q resolves outside the allocation's directory: %w", errVolumesDisabled, src, err)
		}
		return fmt.Errorf("%w: %q: %w", drivers.ErrInvalidConfig, src, err)
	}
	rel, err := root.Rel(host)
	if err != nil {
		return "", false, refused(err)
	}
	if _, err := root.Stat(rel); errors.Is(err, fs.ErrNotExist) {
		if err := root.MkdirAll(rel, 0o755); err != nil {
			return "", false, refused(err)
		}
	}
	real, err := root.RealPath(rel)
	if err != nil {
		return "", false, refused(err)
	}
	return real, false, nil
}

// allocRoot is the allocation's directory: the task directory's parent.
func allocRoot(cfg *drivers.TaskConfig) string {
	if cfg.TaskDir == "" {
		return ""
	}
	return filepath.Dir(filepath.Clean(cfg.TaskDir))
}

func within(p, root string) bool {
	if root == "" {
		return false
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
