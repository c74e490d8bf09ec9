package client

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/disk"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/drivers/rawexec"
	"github.com/droverhq/drover/structs"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func sample(at time.Time, user, system time.Duration) *drivers.TaskUsage {
	u := &drivers.TaskUsage{Timestamp: at}
	u.CPU = drivers.CPUUsage{User: user, System: system, Total: user + system, Measured: []string{"Percent"}}
	u.Memory = drivers.MemoryUsage{RSS: 1 << 20, Measured: []string{"RSS"}}
	return u
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// CPU times become percentages of one core over the interval since the
// base sample (since the task's start without one), and MHz through the
// core's speed; a process new since the base sample counts from its own
// start.
func TestTaskResourceUsageTurnsCPUTimesIntoRates(t *testing.T) {
	base := sample(t0, 1*time.Second, 500*time.Millisecond)
	base.Pids = map[string]*drivers.ProcessUsage{"10": {StartedAt: t0.Add(-time.Hour), Usage: base.Usage}}
	cur := sample(t0.Add(2*time.Second), 2*time.Second, 1*time.Second)
	cur.Pids = map[string]*drivers.ProcessUsage{
		"10": {StartedAt: t0.Add(-time.Hour), Usage: cur.Usage},
		"11": {StartedAt: t0.Add(time.Second), Usage: drivers.Usage{CPU: drivers.CPUUsage{Total: 250 * time.Millisecond}}},
	}
	got := taskResourceUsage(cur, base, t0.Add(-time.Hour), 2000)
	c := got.ResourceUsage.CpuStats
	if !near(c.Percent, 75) || !near(c.UserMode, 50) || !near(c.SystemMode, 25) || !near(c.TotalTicks, 1500) {
		t.Fatalf("cpu %+v", c)
	}
	if got.Timestamp != cur.Timestamp.UnixNano() || got.ResourceUsage.MemoryStats.RSS != 1<<20 ||
		!slices.Equal(got.ResourceUsage.MemoryStats.Measured, []string{"RSS"}) || !slices.Equal(c.Measured, []string{"Percent"}) {
		t.Fatalf("usage %+v %+v", got, got.ResourceUsage.MemoryStats)
	}
	if p := got.Pids["10"].CpuStats.Percent; !near(p, 75) {
		t.Errorf("pid 10: %v%%", p)
	}
	if p := got.Pids["11"].CpuStats.Percent; !near(p, 25) {
		t.Errorf("pid 11 (started 1s ago, 0.25s of CPU): %v%%", p)
	}
	// Without a base sample: the average since the task started.
	first := taskResourceUsage(cur, nil, t0.Add(-8*time.Second), 1000)
	if c := first.ResourceUsage.CpuStats; !near(c.Percent, 30) || !near(c.TotalTicks, 300) {
		t.Fatalf("first sample's cpu %+v", c)
	}
}

// The base sample is the newest at least a second older than the new
// one, else the oldest kept; samples of another run are dropped.
func TestPickChoosesTheNewestSampleAWindowOld(t *testing.T) {
	var ts taskSamples
	if b := ts.pick(sample(t0, 0, 0)); b != nil {
		t.Fatalf("first sample has a base %v", b)
	}
	if b := ts.pick(sample(t0.Add(300*time.Millisecond), time.Millisecond, 0)); b == nil || !b.Timestamp.Equal(t0) {
		t.Fatalf("base of a sample 0.3s later: %v", b)
	}
	ts.pick(sample(t0.Add(900*time.Millisecond), 2*time.Millisecond, 0))
	b := ts.pick(sample(t0.Add(1600*time.Millisecond), 3*time.Millisecond, 0))
	if b == nil || !b.Timestamp.Equal(t0.Add(300*time.Millisecond)) {
		t.Fatalf("base of a sample 1.6s later: %v", b)
	}
	if len(ts.samples) != 4-1 {
		t.Fatalf("%d samples kept, want the base and newer", len(ts.samples))
	}
	// Less CPU time than before: another process; no base.
	if b := ts.pick(sample(t0.Add(5*time.Second), 0, 0)); b != nil {
		t.Fatalf("base across a restart: %v", b)
	}
	for i := range 2 * maxSamples {
		ts.pick(sample(t0.Add(6*time.Second+time.Duration(i)*time.Millisecond), time.Duration(i), 0))
	}
	if len(ts.samples) > maxSamples {
		t.Fatalf("%d samples kept", len(ts.samples))
	}
}

func TestCPUPercentsSplitEachCPUsTime(t *testing.T) {
	base := map[string]cpu.TimesStat{"cpu0": {CPU: "cpu0", User: 10, System: 10, Idle: 80}}
	times := []cpu.TimesStat{
		{CPU: "cpu0", User: 30, System: 20, Idle: 130, Iowait: 20}, // +20 user +10 system +50 idle +20 iowait
		{CPU: "cpu1", User: 1, System: 1, Idle: 2},                 // not in base: since boot
	}
	got, ticks := cpuPercents(times, base, 1000)
	if len(got) != 2 || got[0].CPU != "cpu0" || !near(got[0].User, 20) || !near(got[0].System, 10) || !near(got[0].Idle, 50) {
		t.Fatalf("cpu0 %+v", got[0])
	}
	if !near(got[1].User, 25) || !near(got[1].Idle, 50) {
		t.Fatalf("cpu1 %+v", got[1])
	}
	if !near(ticks, 500+500) {
		t.Fatalf("ticks %v", ticks)
	}
}

func TestMountOfTakesTheDeepestMountAbove(t *testing.T) {
	parts := []disk.PartitionStat{
		{Device: "/dev/sda1", Mountpoint: "/"},
		{Device: "/dev/sdb1", Mountpoint: "/var/lib"},
		{Device: "/dev/sdc1", Mountpoint: "/var/lib/drover-other"},
	}
	for path, want := range map[string]string{
		"/var/lib/drover/alloc": "/dev/sdb1",
		"/var/lib":              "/dev/sdb1",
		"/var/library":          "/dev/sda1",
		"/tmp":                  "/dev/sda1",
	} {
		if got := mountOf(path, parts); got == nil || got.Device != want {
			t.Errorf("%s: %+v, want %s", path, got, want)
		}
	}
}

// statsAlloc is an allocation with the given tasks, each {name, driver,
// config}.
func statsAlloc(id, node string, tasks ...*structs.Task) *structs.Allocation {
	al := serviceAlloc(id, node, "", 0)
	al.Job.TaskGroups[0].Tasks = tasks
	al.Job.TaskGroups[0].Update = nil
	return al
}

// noStats is a mock driver named "blind" that cannot measure its tasks.
type noStats struct{ drivers.Driver }

func (noStats) Name() string { return "blind" }

// A held allocation's tasks are measured through their drivers; a task
// whose driver cannot measure is reported with nothing measured; a task
// that stopped keeps its last usage; unknown allocations and tasks are
// errors.
func TestAllocStatsOfMockTasksAndTheirLastUsage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, err := New(Config{
			DataDir: t.TempDir(), NodeName: "box", ServerAPI: srv, Logger: testLogger(t), CPUTotalMHz: 4000,
			Drivers: []drivers.Driver{mock.New(mock.Options{}), noStats{mock.New(mock.Options{})}},
		})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { a.Run(context.Background()); close(done) }()
		defer func() { a.Shutdown(true); <-done }()
		synctest.Wait()
		srv.put(statsAlloc("a1", a.NodeID(),
			&structs.Task{Name: "app", Driver: "mock", Config: map[string]any{}},
			&structs.Task{Name: "blind", Driver: "blind", Config: map[string]any{}},
		))
		time.Sleep(reportWindow)
		synctest.Wait()

		ctx := context.Background()
		if _, err := a.AllocStats(ctx, "nope", ""); !errors.Is(err, ErrAllocNotHeld) {
			t.Fatalf("unknown alloc: %v", err)
		}
		if _, err := a.AllocStats(ctx, "a1", "nope"); !errors.Is(err, ErrUnknownTask) {
			t.Fatalf("unknown task: %v", err)
		}
		got, err := a.AllocStats(ctx, "a1", "")
		if err != nil {
			t.Fatal(err)
		}
		app, blind := got.Tasks["app"], got.Tasks["blind"]
		if app == nil || blind == nil || len(got.Tasks) != 2 {
			t.Fatalf("tasks %+v", got.Tasks)
		}
		if !slices.Contains(app.ResourceUsage.MemoryStats.Measured, "RSS") || app.Timestamp != time.Now().UnixNano() {
			t.Fatalf("app %+v %+v", app, app.ResourceUsage.MemoryStats)
		}
		if m := blind.ResourceUsage.MemoryStats.Measured; m == nil || len(m) != 0 || blind.ResourceUsage.CpuStats.Measured == nil {
			t.Fatalf("blind task's measured %v", m)
		}
		if !slices.Equal(got.ResourceUsage.MemoryStats.Measured, []string{"RSS"}) || got.Timestamp != app.Timestamp {
			t.Fatalf("alloc usage %+v at %d", got.ResourceUsage.MemoryStats, got.Timestamp)
		}
		one, err := a.AllocStats(ctx, "a1", "app")
		if err != nil || len(one.Tasks) != 1 || one.Tasks["app"] == nil {
			t.Fatalf("?task=app: %+v %v", one, err)
		}
		last := one.Tasks["app"].Timestamp

		srv.change("a1", func(al *structs.Allocation) { al.DesiredStatus = structs.AllocDesiredStatusStop })
		time.Sleep(time.Minute)
		synctest.Wait()
		if st := srv.alloc("a1").TaskStates["app"]; st == nil || st.State != structs.TaskStateDead {
			t.Fatalf("app after the stop: %+v", st)
		}
		after, err := a.AllocStats(ctx, "a1", "app")
		if err != nil || after.Tasks["app"].Timestamp != last ||
			!slices.Contains(after.Tasks["app"].ResourceUsage.MemoryStats.Measured, "RSS") {
			t.Fatalf("a stopped task's usage: %+v %v (last sample at %d)", after.Tasks["app"], err, last)
		}
	})
}

// A raw_exec task's real process: resident memory, its PID, and CPU use
// that shows as a percentage and MHz.
func TestAllocStatsOfARawExecProcess(t *testing.T) {
	srv := newFakeServer()
	a, err := New(Config{
		DataDir: t.TempDir(), NodeName: "box", ServerAPI: srv, Logger: testLogger(t), CPUTotalMHz: 4000,
		Drivers: []drivers.Driver{rawexec.New(rawexec.Options{})},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	defer func() { a.Shutdown(true); <-done }()
	srv.put(statsAlloc("busy", a.NodeID(), &structs.Task{
		Name: "app", Driver: "raw_exec", KillTimeout: time.Second,
		Config: map[string]any{"command": "/bin/sh", "args": []any{"-c", "while :; do :; done"}},
	}))
	for {
		u, err := a.AllocStats(ctx, "busy", "")
		// (A process's resident memory may read 0 for a moment after it
		// starts: the kernel's counters are per CPU, folded in lazily.)
		if err == nil && u.Tasks["app"].ResourceUsage.CpuStats.TotalTicks > 0 && u.Tasks["app"].ResourceUsage.MemoryStats.RSS > 0 {
			ru := u.Tasks["app"].ResourceUsage
			if ru.CpuStats.Percent <= 0 || len(u.Tasks["app"].Pids) != 1 ||
				u.ResourceUsage.MemoryStats.RSS != ru.MemoryStats.RSS {
				t.Fatalf("usage %+v %+v pids %v", ru.MemoryStats, ru.CpuStats, u.Tasks["app"].Pids)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no CPU use measured: %+v %v", u, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The host's figures the nomad CLI prints are there, and never nil.
func TestHostStatsFillWhatTheNomadCLIReads(t *testing.T) {
	a, err := New(Config{DataDir: t.TempDir(), NodeName: "box", ServerAPI: newFakeServer(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		h := a.HostStats(context.Background())
		if h.Memory.Total == 0 || h.Memory.Used == 0 || len(h.CPU) == 0 || h.AllocDirStats.Size == 0 ||
			h.AllocDirStats.Mountpoint == "" || len(h.DiskStats) == 0 || h.Uptime == 0 || h.Timestamp == 0 {
			t.Fatalf("host stats %+v memory %+v alloc dir %+v", h, h.Memory, h.AllocDirStats)
		}
		for _, c := range h.CPU {
			if c.CPU == "" || c.User < 0 || c.System < 0 || c.Idle < 0 || c.User+c.System+c.Idle > 100.0001 {
				t.Fatalf("cpu %+v", c)
			}
		}
	}
}
