package sim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ErrNoCPUTime: a process's or the machine's CPU time could not be read.
var ErrNoCPUTime = errors.New("cannot read CPU time")

// userHZ is the unit of the times in /proc/<pid>/stat and /proc/stat:
// fixed at 100 per second by the Linux ABI, whatever the kernel's tick.
const userHZ = 100

// CPUTime returns the user plus system CPU time process pid (0: this
// process) has used, from /proc/<pid>/stat.
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(procFile(pid, "stat"))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoCPUTime, err)
	}
	return parseProcStat(string(b))
}

// parseProcStat reads utime and stime from a /proc/<pid>/stat line. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses, so fields are counted from the last ')': state is field
// 3, utime 14 and stime 15.
func parseProcStat(line string) (time.Duration, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, fmt.Errorf("%w: no command name in %q", ErrNoCPUTime, line)
	}
	f := strings.Fields(line[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%w: %d fields after the command name", ErrNoCPUTime, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("%w: field %q", ErrNoCPUTime, s)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// machineTimes are the machine's CPU times summed over its CPUs, in
// ticks of 1/userHZ s, from the "cpu" line of /proc/stat.
type machineTimes struct {
	total, idle int64 // idle includes iowait
}

func readMachineTimes() (machineTimes, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return machineTimes{}, fmt.Errorf("%w: %w", ErrNoCPUTime, err)
	}
	defer f.Close()
	return parseMachineTimes(f)
}

// parseMachineTimes reads the "cpu" line: user nice system idle iowait
// irq softirq steal (and guest times, already counted in user and nice).
// Steal, time the hypervisor gave to others, counts as busy: the machine
// did not have it.
func parseMachineTimes(r io.Reader) (machineTimes, error) {
	line, rest, err := findLine(r, "cpu ")
	if err != nil {
		return machineTimes{}, fmt.Errorf("%w: %w", ErrNoCPUTime, err)
	}
	f := strings.Fields(rest)
	if len(f) < 4 {
		return machineTimes{}, fmt.Errorf("%w: cpu line %q", ErrNoCPUTime, line)
	}
	var t machineTimes
	for k, s := range f[:min(len(f), 8)] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return machineTimes{}, fmt.Errorf("%w: cpu line %q", ErrNoCPUTime, line)
		}
		t.total += v
		if k == 3 || k == 4 { // idle, iowait
			t.idle += v
		}
	}
	return t, nil
}

// cpuMeter measures the CPU time a stretch of a scenario costs: each
// server process's, this process's (the fleet, and in-process servers),
// and how busy the whole machine was.
type cpuMeter struct {
	servers []int // PIDs
	start   map[int]time.Duration
	self    time.Duration
	machine machineTimes
	err     error
}

// startCPUMeter reads the starting times. servers are the PIDs of the
// server processes the scenario started (none against -servers).
func startCPUMeter(servers []int) *cpuMeter {
	m := &cpuMeter{servers: servers, start: map[int]time.Duration{}}
	for _, pid := range servers {
		t, err := CPUTime(pid)
		if err != nil {
			m.err = err
			return m
		}
		m.start[pid] = t
	}
	if m.self, m.err = CPUTime(0); m.err != nil {
		return m
	}
	m.machine, m.err = readMachineTimes()
	return m
}

// cpuUse is what a cpuMeter measured.
type cpuUse struct {
	// measured is how many server processes were measured.
	measured      int
	servers, self time.Duration
	// perServer is each server process's own, by PID.
	perServer map[int]time.Duration
	// busy is the share of the machine's CPU time not idle, 0 to 1.
	busy float64
}

// stop reads the times again. A server that ended meanwhile (failover)
// makes the measure fail: its last times are lost.
func (m *cpuMeter) stop() (cpuUse, error) {
	if m.err != nil {
		return cpuUse{}, m.err
	}
	u := cpuUse{measured: len(m.servers), perServer: map[int]time.Duration{}}
	for _, pid := range m.servers {
		t, err := CPUTime(pid)
		if err != nil {
			return cpuUse{}, err
		}
		u.servers += t - m.start[pid]
		u.perServer[pid] = t - m.start[pid]
	}
	self, err := CPUTime(0)
	if err != nil {
		return cpuUse{}, err
	}
	u.self = self - m.self
	mt, err := readMachineTimes()
	if err != nil {
		return cpuUse{}, err
	}
	if total := mt.total - m.machine.total; total > 0 {
		u.busy = 1 - float64(mt.idle-m.machine.idle)/float64(total)
	}
	return u, nil
}

// addCPUFigures records a stretch's CPU use under prefix: the servers'
// and the fleet's CPU seconds, the least time that work needs on this
// machine's cores, and how busy the machine was.
func (e *env) addCPUFigures(prefix string, u cpuUse, err error) {
	if err != nil {
		e.res.Note("%sCPU time not read: %v", prefix, err)
		return
	}
	fleet := "fleet"
	if e.cfg.Mode == ModeInProcess {
		fleet = "process" // the server runs in the fleet's process
	}
	if u.measured > 0 {
		e.res.Add(prefix+"cpu_servers_s", round(u.servers.Seconds()), "s", "")
	}
	e.res.Add(prefix+"cpu_"+fleet+"_s", round(u.self.Seconds()), "s", "")
	if u.measured > 0 || e.cfg.Mode == ModeInProcess {
		// Servers elsewhere (-servers) are not measured: no floor.
		e.res.Add(prefix+"cpu_min_s", round((u.servers+u.self).Seconds()/float64(runtime.NumCPU())), "s", "")
	}
	e.res.Add(prefix+"machine_busy_pct", round(100*u.busy), "%", "")
}

// serverPIDs returns the PIDs of the server processes the scenario
// started and that still run.
func (e *env) serverPIDs() []int {
	if e.servers == nil {
		return nil
	}
	var out []int
	for _, p := range e.servers.Procs() {
		if !p.Exited() {
			out = append(out, p.PID())
		}
	}
	return out
}
