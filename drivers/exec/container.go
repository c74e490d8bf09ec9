package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/opencontainers/cgroups"
	devcfg "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"

	"github.com/droverhq/drover/drivers"
)

// containerID names a task's container (and its cgroup): the allocation's
// ID and the task's name, which is hashed when it holds characters a
// container ID may not.
func containerID(allocID, task string) string {
	ok := task != ""
	for _, r := range task {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			ok = false
			break
		}
	}
	if ok {
		return allocID + "." + task
	}
	sum := sha256.Sum256([]byte(task))
	return allocID + "." + hex.EncodeToString(sum[:8])
}

// taskUser is the host user a task runs as.
type taskUser struct {
	name   string
	uid    int
	gid    int
	groups []int
}

// lookupUser finds a user in the host's user database, as Nomad's exec
// driver does (the chroot's /etc is the host's).
func lookupUser(name string) (taskUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return taskUser{}, fmt.Errorf("user %q: %w", name, err)
	}
	tu := taskUser{name: name}
	if tu.uid, err = strconv.Atoi(u.Uid); err != nil {
		return tu, fmt.Errorf("user %q: uid %q", name, u.Uid)
	}
	if tu.gid, err = strconv.Atoi(u.Gid); err != nil {
		return tu, fmt.Errorf("user %q: gid %q", name, u.Gid)
	}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.Atoi(s); err == nil && g != tu.gid {
				tu.groups = append(tu.groups, g)
			}
		}
	}
	return tu, nil
}

const (
	mountNoExec = unix.MS_NOEXEC | unix.MS_NOSUID | unix.MS_NODEV
	bindRO      = unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY
)

// containerConfig is the libcontainer configuration of one task: its root
// is the task directory, where the chroot_env directories of the host are
// bound read-only, the allocation's shared directory at /alloc and the
// task's volume mounts; it gets mount, UTS, PID and IPC namespaces (the
// latter two unless their mode is "host"), the host's network (or, in a
// bridge allocation, the allocation's network namespace), a cgroup
// limiting its memory and weighting its CPU, and caps as capabilities.
func (d *Driver) containerConfig(id string, cfg *drivers.TaskConfig, tc taskConfig, caps []string) (*configs.Config, error) {
	ns := configs.Namespaces{{Type: configs.NEWNS}, {Type: configs.NEWUTS}}
	if tc.PidMode == ModePrivate {
		ns = append(ns, configs.Namespace{Type: configs.NEWPID})
	}
	if tc.IpcMode == ModePrivate {
		ns = append(ns, configs.Namespace{Type: configs.NEWIPC})
	}
	if cfg.NetNSPath != "" {
		// A bridge allocation: the namespace the client made for it.
		ns = append(ns, configs.Namespace{Type: configs.NEWNET, Path: cfg.NetNSPath})
	}
	devs := taskDevices()
	var devRules []*devcfg.Rule
	for _, dev := range devs {
		devRules = append(devRules, &dev.Rule)
	}
	// The terminals of the task's own devpts (alloc exec -t).
	devRules = append(devRules,
		&devcfg.Rule{Type: devcfg.CharDevice, Major: 5, Minor: 2, Permissions: "rwm", Allow: true},
		&devcfg.Rule{Type: devcfg.CharDevice, Major: 136, Minor: devcfg.Wildcard, Permissions: "rwm", Allow: true})
	res := &cgroups.Resources{Devices: devRules}
	if r := cfg.Resources; r != nil {
		limit := r.Memory.MemoryMB
		if r.Memory.MemoryMaxMB > limit {
			// memory_max: the hard limit; memory the soft one.
			limit = r.Memory.MemoryMaxMB
			res.MemoryReservation = r.Memory.MemoryMB << 20
		}
		if limit > 0 {
			res.Memory = limit << 20
			if d.noSwap {
				res.MemorySwap = res.Memory
			}
		}
		if r.Cpu.CpuShares > 0 {
			// cpu MHz as the task's weight: cpu.shares under v1, converted
			// to cpu.weight under v2 (which the v2 manager leaves to us).
			shares := uint64(max(r.Cpu.CpuShares, 2))
			if cgroups.IsCgroup2UnifiedMode() {
				res.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(shares)
			} else {
				res.CpuShares = shares
			}
		}
	}
	c := &configs.Config{
		Rootfs:     cfg.TaskDir,
		Hostname:   hostname(cfg.TaskName),
		Namespaces: ns,
		Capabilities: &configs.Capabilities{
			Bounding: caps, Effective: caps, Permitted: caps, Inheritable: caps,
		},
		Cgroups: &cgroups.Cgroup{
			Path:      d.cgroupParent + "/" + id,
			Resources: res,
		},
		Devices: devs,
		MaskPaths: []string{
			"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
			"/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
		},
		ReadonlyPaths: []string{
			"/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
		},
		NoNewPrivileges: false,
		Rlimits:         nil,
	}
	c.Mounts = []*configs.Mount{
		{Source: "proc", Destination: "/proc", Device: "proc", Flags: mountNoExec},
		{Source: "tmpfs", Destination: "/dev", Device: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_STRICTATIME, Data: "mode=755,size=65536k"},
		{Source: "devpts", Destination: "/dev/pts", Device: "devpts", Flags: unix.MS_NOSUID | unix.MS_NOEXEC, Data: "newinstance,ptmxmode=0666,mode=0620,gid=5"},
		{Source: "shm", Destination: "/dev/shm", Device: "tmpfs", Flags: mountNoExec, Data: "mode=1777,size=65536k"},
		{Source: "mqueue", Destination: "/dev/mqueue", Device: "mqueue", Flags: mountNoExec},
		{Source: "sysfs", Destination: "/sys", Device: "sysfs", Flags: mountNoExec | unix.MS_RDONLY},
		// The task's own cgroups, read-only: runtimes that size themselves
		// to their limits (the JVM's heap) read them there. Under cgroup
		// v1 libcontainer binds the task's directory of each hierarchy;
		// under v2, without a cgroup namespace, it would mount the host's
		// whole tree, so there the task has none (see below).
		{Source: "cgroup", Destination: "/sys/fs/cgroup", Device: "cgroup", Flags: mountNoExec | unix.MS_RDONLY},
	}
	if tc.PidMode == ModeHost {
		// The host's PID namespace: a new instance of proc would need
		// one of its own; bind the host's.
		c.Mounts[0] = &configs.Mount{Source: "/proc", Destination: "/proc", Device: "bind", Flags: unix.MS_BIND | unix.MS_REC}
	}
	if tc.IpcMode == ModeHost {
		c.Mounts = withoutMount(c.Mounts, "/dev/mqueue")
	}
	if cgroups.IsCgroup2UnifiedMode() {
		c.Mounts = withoutMount(c.Mounts, "/sys/fs/cgroup")
	}
	// The host directories of chroot_env, read-only, in a stable order
	// (a parent before what is inside it).
	srcs := make([]string, 0, len(d.chrootEnv))
	for src := range d.chrootEnv {
		srcs = append(srcs, src)
	}
	sort.Slice(srcs, func(i, j int) bool { return d.chrootEnv[srcs[i]] < d.chrootEnv[srcs[j]] })
	for _, src := range srcs {
		if _, err := os.Stat(src); err != nil {
			continue // absent on this host (lib32 on most)
		}
		c.Mounts = append(c.Mounts, &configs.Mount{Source: src, Destination: d.chrootEnv[src], Device: "bind", Flags: bindRO})
	}
	if cfg.AllocDir != "" {
		c.Mounts = append(c.Mounts, &configs.Mount{Source: cfg.AllocDir, Destination: "/alloc", Device: "bind", Flags: unix.MS_BIND | unix.MS_REC})
	}
	for _, m := range cfg.Mounts {
		flags := unix.MS_BIND | unix.MS_REC
		if m.Readonly {
			flags |= unix.MS_RDONLY
		}
		dst := m.TaskPath
		if !strings.HasPrefix(dst, "/") {
			dst = "/" + dst
		}
		c.Mounts = append(c.Mounts, &configs.Mount{Source: m.HostPath, Destination: filepath.Clean(dst), Device: "bind", Flags: flags})
	}
	return c, nil
}

func withoutMount(ms []*configs.Mount, dst string) []*configs.Mount {
	out := ms[:0]
	for _, m := range ms {
		if m.Destination != dst {
			out = append(out, m)
		}
	}
	return out
}

// taskDevices are the device nodes in a task's /dev, and all it may use
// besides its terminals: null, zero, full, random, urandom and tty.
func taskDevices() []*devcfg.Device {
	var out []*devcfg.Device
	for _, d := range []struct {
		name         string
		major, minor int64
	}{{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0}} {
		out = append(out, &devcfg.Device{
			Path: "/dev/" + d.name, FileMode: 0o666,
			Rule: devcfg.Rule{Type: devcfg.CharDevice, Major: d.major, Minor: d.minor, Permissions: "rwm", Allow: true},
		})
	}
	return out
}

// hostname is the task's host name in its UTS namespace: its name, cut
// to what a host name may hold.
func hostname(task string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(task) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
		if b.Len() == 63 {
			break
		}
	}
	if b.Len() == 0 {
		return "task"
	}
	return b.String()
}

// TaskPath is where a host path is inside a task's root: under the
// chroot_env directory that holds it (the deepest, when they nest), or ""
// when no chroot_env directory does and the task cannot see it. A driver
// built on exec finds its runtime there (the java driver its JVM).
func (d *Driver) TaskPath(host string) string {
	host = filepath.Clean(host)
	best, bestDst := "", ""
	for src, dst := range d.chrootEnv {
		src = filepath.Clean(src)
		if (host == src || strings.HasPrefix(host, src+"/") || src == "/") && len(src) > len(best) {
			best, bestDst = src, dst
		}
	}
	if best == "" {
		return ""
	}
	rel, err := filepath.Rel(best, host)
	if err != nil {
		return ""
	}
	return filepath.Join(bestDst, rel)
}
