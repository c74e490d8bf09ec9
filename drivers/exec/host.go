package exec

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// Unsupported says why this host cannot run exec tasks, or "" when it
// can: the client must be built with cgo and run as root, on Linux, with
// PID, IPC, mount and UTS namespaces, and the cpu and memory cgroup
// controllers (v2), or cpu, memory and devices (v1).
func Unsupported() string {
	if !builtWithCgo {
		return "exec needs a client built with cgo (libcontainer's namespace setup is C)"
	}
	if os.Geteuid() != 0 {
		return "exec needs the client to run as root"
	}
	for _, ns := range []string{"pid", "ipc", "mnt", "uts"} {
		if _, err := os.Stat("/proc/self/ns/" + ns); err != nil {
			return "exec needs the kernel's " + ns + " namespaces"
		}
	}
	if cgroups.IsCgroup2UnifiedMode() {
		b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
		if err != nil {
			return "exec needs cgroups: " + err.Error()
		}
		have := strings.Fields(string(b))
		for _, c := range []string{"cpu", "memory"} {
			if !contains(have, c) {
				return "exec needs the " + c + " cgroup controller (cgroup v2)"
			}
		}
		if err := unix.Access("/sys/fs/cgroup", unix.W_OK); err != nil {
			return "exec needs a writable cgroup tree: /sys/fs/cgroup: " + err.Error()
		}
		return ""
	}
	// v1: the devices controller too, which holds a task's device rules
	// (v2 sets them with eBPF).
	for _, c := range []string{"cpu", "memory", "devices"} {
		mnt, err := cgroups.FindCgroupMountpoint("", c)
		if err != nil {
			return "exec needs the " + c + " cgroup controller mounted (cgroup v1)"
		}
		if err := unix.Access(mnt, unix.W_OK); err != nil {
			return "exec needs a writable cgroup tree: " + mnt + ": " + err.Error()
		}
	}
	return ""
}

// CgroupMode is "v2" on a host whose cgroups are the unified hierarchy,
// "v1" otherwise (v1 alone or hybrid).
func CgroupMode() string {
	if cgroups.IsCgroup2UnifiedMode() {
		return "v2"
	}
	return "v1"
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// swapLimitable reports whether a task's swap can be limited (to none
// beyond its memory, as Nomad does): always under cgroup v2, under v1 when
// the kernel accounts swap (memory.memsw.*).
func swapLimitable() bool {
	if cgroups.IsCgroup2UnifiedMode() {
		_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
		return err == nil
	}
	mnt, err := cgroups.FindCgroupMountpoint("", "memory")
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(mnt, "memory.memsw.limit_in_bytes"))
	return err == nil
}

// oomKills is how many of the cgroup's processes the kernel's OOM killer
// has killed: oom_kill in memory.oom_control (v1) or memory.events (v2).
func oomKills(dir string) uint64 {
	if dir == "" {
		return 0
	}
	for _, f := range []string{"memory.events", "memory.oom_control"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("oom_kill ")); ok {
				n, _ := strconv.ParseUint(string(bytes.TrimSpace(rest)), 10, 64)
				return n
			}
		}
	}
	return 0
}

// pidWatch tells when a process that is not the client's child (a
// re-attached task's init) exits: through a pidfd, or by polling /proc.
type pidWatch struct {
	pid   int
	start uint64
	f     *os.File
	stop  chan struct{}
	once  sync.Once
}

var errGone = errors.New("process gone")

// watchPid watches pid, which must be the process that started at start
// (clock ticks since boot).
func watchPid(pid int, start uint64) (*pidWatch, error) {
	w := &pidWatch{pid: pid, start: start, stop: make(chan struct{})}
	if fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK); err == nil {
		w.f = os.NewFile(uintptr(fd), "pidfd")
	}
	// The pidfd is open: checking now tells that it is the process meant.
	if !w.sameProcess() {
		w.close()
		return nil, errGone
	}
	return w, nil
}

func (w *pidWatch) sameProcess() bool {
	got, zombie, err := procStart(w.pid)
	return err == nil && !zombie && got == w.start
}

// wait blocks until the process exits or the watch is closed.
func (w *pidWatch) wait() {
	if w.f != nil {
		if rc, err := w.f.SyscallConn(); err == nil {
			err = rc.Read(func(fd uintptr) bool {
				fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
				n, err := unix.Poll(fds, 0)
				return err == nil && n > 0
			})
			if err == nil {
				return
			}
		}
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for w.sameProcess() {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
	}
}

func (w *pidWatch) close() {
	w.once.Do(func() {
		close(w.stop)
		if w.f != nil {
			_ = w.f.Close()
		}
	})
}

// procStart reads a process's start time (field 22 of /proc/<pid>/stat)
// and whether it is a zombie.
func procStart(pid int) (uint64, bool, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, err
	}
	r := bytes.LastIndexByte(b, ')')
	if r < 0 {
		return 0, false, errGone
	}
	f := bytes.Fields(b[r+1:])
	if len(f) < 20 || len(f[0]) == 0 {
		return 0, false, errGone
	}
	n, err := strconv.ParseUint(string(f[19]), 10, 64)
	return n, f[0][0] == 'Z' || f[0][0] == 'X', err
}
