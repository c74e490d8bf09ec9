package rawexec

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/droverhq/drover/drivers"
)

var _ drivers.StatsDriver = (*Driver)(nil)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, which
// Linux fixes at 100 for user space on every architecture.
const userHZ = 100

// The statistics raw_exec measures, as Nomad's executor names them.
var (
	measuredMemory = []string{drivers.MeasuredRSS, drivers.MeasuredSwap}
	measuredCPU    = []string{drivers.MeasuredSystemMode, drivers.MeasuredUserMode, drivers.MeasuredPercent}
)

// Stats samples the task's process tree: the leader, its descendants, and
// whatever else is in its process group (a grandchild whose parent died
// keeps the group). Memory is each live process's resident set and swap;
// CPU time is what the processes used, plus what the children they reaped
// used (so a shell loop's short-lived commands count). It returns an
// error wrapping drivers.ErrTaskNotFound once the leader has exited.
func (d *Driver) Stats(ctx context.Context, h *drivers.TaskHandle) (*drivers.TaskUsage, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t.mu.Lock()
	exited := t.exited
	t.mu.Unlock()
	if exited {
		return nil, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	now := time.Now()
	procs, err := readProcs()
	if err != nil {
		return nil, err
	}
	leader, ok := procs[t.pid]
	if !ok || leader.startTicks != t.watch.ticks || leader.zombie {
		return nil, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	return treeUsage(procs, t.pid, now, bootTime()), nil
}

// procSample is what one process's /proc files say of it.
type procSample struct {
	pid, ppid, pgrp int
	zombie          bool
	startTicks      uint64
	// CPU times in clock ticks: the process's own, and its reaped
	// children's.
	utime, stime, cutime, cstime uint64
	rssBytes                     uint64
}

// readProcs samples every process in /proc, by PID. Processes that exit
// while it reads are left out.
func readProcs() (map[int]*procSample, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	page := uint64(os.Getpagesize())
	out := make(map[int]*procSample, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		fields, err := statFields(pid)
		if err != nil {
			continue
		}
		p, err := parseProcStat(pid, fields, page)
		if err != nil {
			continue
		}
		out[pid] = p
	}
	return out, nil
}

// parseProcStat reads a process's sample from the fields of its
// /proc/<pid>/stat, field 3 on (see statFields).
func parseProcStat(pid int, fields [][]byte, page uint64) (*procSample, error) {
	if len(fields) < 22 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	var err error
	num := func(i int) uint64 {
		if err != nil {
			return 0
		}
		var n uint64
		n, err = strconv.ParseUint(string(fields[i]), 10, 64)
		return n
	}
	p := &procSample{pid: pid, zombie: fields[0][0] == 'Z' || fields[0][0] == 'X'}
	p.ppid, p.pgrp = int(num(1)), int(num(2))
	p.utime, p.stime, p.cutime, p.cstime = num(11), num(12), num(13), num(14)
	p.startTicks = num(19)
	p.rssBytes = num(21) * page
	if err != nil {
		return nil, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return p, nil
}

// treeUsage sums the usage of the process tree led by leader: its
// descendants and the members of its process group.
func treeUsage(procs map[int]*procSample, leader int, now, boot time.Time) *drivers.TaskUsage {
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	in := map[int]bool{}
	queue := []int{leader}
	for pid, p := range procs {
		if p.pgrp == leader {
			queue = append(queue, pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if in[pid] || procs[pid] == nil {
			continue
		}
		in[pid] = true
		queue = append(queue, children[pid]...)
	}
	u := &drivers.TaskUsage{Timestamp: now, Pids: make(map[string]*drivers.ProcessUsage, len(in))}
	u.Memory.Measured = measuredMemory
	u.CPU.Measured = measuredCPU
	for pid := range in {
		p := procs[pid]
		user, system := ticks(p.utime), ticks(p.stime)
		u.CPU.User += user + ticks(p.cutime)
		u.CPU.System += system + ticks(p.cstime)
		if p.zombie {
			continue
		}
		swap := procSwap(pid)
		u.Memory.RSS += p.rssBytes
		u.Memory.Swap += swap
		pu := &drivers.ProcessUsage{StartedAt: boot.Add(ticks(p.startTicks))}
		pu.Memory = drivers.MemoryUsage{RSS: p.rssBytes, Swap: swap, Measured: measuredMemory}
		pu.CPU = drivers.CPUUsage{User: user, System: system, Total: user + system, Measured: measuredCPU}
		u.Pids[strconv.Itoa(pid)] = pu
	}
	u.CPU.Total = u.CPU.User + u.CPU.System
	return u
}

// ticks converts clock ticks to a duration.
func ticks(n uint64) time.Duration {
	return time.Duration(n) * (time.Second / userHZ)
}

// procSwap reads a process's swapped-out memory (VmSwap in
// /proc/<pid>/status), 0 when it cannot.
func procSwap(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	return statusKB(b, "VmSwap:")
}

// statusKB finds a "Key:   123 kB" line of a /proc status file and returns
// its value in bytes.
func statusKB(b []byte, key string) uint64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(key))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return 0
		}
		return n << 10
	}
	return 0
}

// bootTime is when the machine booted (btime in /proc/stat): the origin
// of processes' start times.
var bootTime = sync.OnceValue(func() time.Time {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if rest, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			if n, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64); err == nil {
				return time.Unix(n, 0)
			}
		}
	}
	return time.Time{}
})
