package rawexec

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
)

func stats(t *testing.T, d *Driver, h *drivers.TaskHandle) *drivers.TaskUsage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	u, err := d.Stats(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A busy shell with a sleeping child and a grandchild orphaned into the
// task's process group: all three are measured, the CPU time grows, and
// the task's figures are the sum of its processes'.
func TestStatsMeasureTheTaskProcessTree(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "busy", "/bin/sh", "-c",
		`(sleep 600 & echo $! > orphan.pid); sleep 600 & echo $! > child.pid; while :; do :; done`)
	h := start(t, d, cfg)
	var leader handleState
	if err := h.GetDriverState(&leader); err != nil {
		t.Fatal(err)
	}
	child := strings.TrimSpace(waitFile(t, filepath.Join(cfg.TaskDir, "child.pid")))
	orphan := strings.TrimSpace(waitFile(t, filepath.Join(cfg.TaskDir, "orphan.pid")))
	t.Cleanup(func() {
		for _, s := range []string{child, orphan} {
			if pid, err := strconv.Atoi(s); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})

	first := stats(t, d, h)
	for deadline := time.Now().Add(testTimeout); first.Memory.RSS == 0 && time.Now().Before(deadline); {
		// Just-exec'd processes may show no resident memory yet.
		time.Sleep(20 * time.Millisecond)
		first = stats(t, d, h)
	}
	for _, pid := range []string{strconv.Itoa(leader.PID), child, orphan} {
		if first.Pids[pid] == nil {
			t.Fatalf("pid %s not measured; pids %v", pid, slices.Sorted(maps.Keys(first.Pids)))
		}
	}
	if first.Memory.RSS == 0 || !slices.Contains(first.Memory.Measured, drivers.MeasuredRSS) ||
		!slices.Contains(first.CPU.Measured, drivers.MeasuredPercent) {
		t.Fatalf("usage %+v", first.Usage)
	}
	var rss uint64
	for _, p := range first.Pids {
		rss += p.Memory.RSS
		if p.StartedAt.IsZero() || p.StartedAt.After(first.Timestamp) {
			t.Errorf("process started at %v, sampled at %v", p.StartedAt, first.Timestamp)
		}
	}
	if rss != first.Memory.RSS {
		t.Errorf("task RSS %d, its processes' %d", first.Memory.RSS, rss)
	}

	// The busy loop keeps using CPU: a later sample has more.
	deadline := time.Now().Add(testTimeout)
	for {
		u := stats(t, d, h)
		if u.CPU.Total > first.CPU.Total && u.CPU.User > first.CPU.User && u.Timestamp.After(first.Timestamp) {
			if u.CPU.Total != u.CPU.User+u.CPU.System {
				t.Fatalf("total %v is not user %v + system %v", u.CPU.Total, u.CPU.User, u.CPU.System)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time did not grow: %+v then %+v", first.CPU, u.CPU)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Once the task has exited, or for a handle the driver does not know,
// Stats says the task is not found.
func TestStatsOfAnExitedTaskIsNotFound(t *testing.T) {
	d := New(Options{})
	h := start(t, d, newTask(t, "quick", "/bin/true"))
	waitExit(t, d, h)
	if _, err := d.Stats(context.Background(), h); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("stats of an exited task: %v", err)
	}
	other := *h
	other.Config = &drivers.TaskConfig{AllocID: "nope", TaskName: "x"}
	if _, err := d.Stats(context.Background(), &other); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("stats of an unknown task: %v", err)
	}
}

// A driver that re-attached to a task after a restart measures it too.
func TestStatsOfARecoveredTask(t *testing.T) {
	d1 := New(Options{})
	h := start(t, d1, newTask(t, "long", "/bin/sleep", "600"))
	d2 := New(Options{})
	if err := d2.Recover(h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d2.Destroy(h) })
	// A process that has just exec'd may show no resident memory yet (the
	// kernel folds its counters in lazily): wait for some.
	deadline := time.Now().Add(testTimeout)
	for {
		u := stats(t, d2, h)
		if len(u.Pids) != 1 {
			t.Fatalf("recovered task's pids %v", u.Pids)
		}
		if u.Memory.RSS > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("recovered task's usage %+v", u.Usage)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// treeUsage takes the leader, its descendants and its process group, and
// leaves out everything else; a zombie's CPU time counts, not its memory.
func TestTreeUsageSumsTheLeadersTreeAndGroup(t *testing.T) {
	procs := map[int]*procSample{
		1:  {pid: 1, ppid: 0, pgrp: 1, utime: 1000, rssBytes: 1 << 20},
		10: {pid: 10, ppid: 1, pgrp: 10, utime: 100, stime: 10, cutime: 5, cstime: 1, rssBytes: 4096, startTicks: 200},
		11: {pid: 11, ppid: 10, pgrp: 10, utime: 50, rssBytes: 8192, startTicks: 300},
		12: {pid: 12, ppid: 11, pgrp: 12, utime: 7, rssBytes: 4096, startTicks: 310}, // setsid'd grandchild
		13: {pid: 13, ppid: 1, pgrp: 10, stime: 3, rssBytes: 4096, startTicks: 320},  // orphan in the group
		14: {pid: 14, ppid: 10, pgrp: 10, utime: 2, zombie: true, rssBytes: 0},
		20: {pid: 20, ppid: 1, pgrp: 20, utime: 999, rssBytes: 1 << 30},
	}
	boot := time.Unix(1_000_000, 0)
	now := boot.Add(time.Hour)
	u := treeUsage(procs, 10, now, boot)
	if got := slices.Sorted(maps.Keys(u.Pids)); !slices.Equal(got, []string{"10", "11", "12", "13"}) {
		t.Fatalf("pids %v", got)
	}
	if u.Memory.RSS != 4096+8192+4096+4096 {
		t.Errorf("RSS %d", u.Memory.RSS)
	}
	wantUser := ticks(100 + 5 + 50 + 7 + 2)
	wantSystem := ticks(10 + 1 + 3)
	if u.CPU.User != wantUser || u.CPU.System != wantSystem || u.CPU.Total != wantUser+wantSystem {
		t.Errorf("cpu %+v, want user %v system %v", u.CPU, wantUser, wantSystem)
	}
	if p := u.Pids["11"]; p.CPU.Total != ticks(50) || !p.StartedAt.Equal(boot.Add(3*time.Second)) {
		t.Errorf("pid 11: %+v", p)
	}
	if !u.Timestamp.Equal(now) {
		t.Errorf("timestamp %v", u.Timestamp)
	}
}

func TestStatusKBReadsAKilobyteLine(t *testing.T) {
	status := []byte("Name:\tsleep\nVmRSS:\t    1024 kB\nVmSwap:\t      12 kB\n")
	if got := statusKB(status, "VmSwap:"); got != 12<<10 {
		t.Errorf("VmSwap %d", got)
	}
	if got := statusKB(status, "VmPTE:"); got != 0 {
		t.Errorf("missing key %d", got)
	}
}

func TestParseProcStatRefusesShortOrBadLines(t *testing.T) {
	fields, err := statFields(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	p, err := parseProcStat(os.Getpid(), fields, 4096)
	if err != nil || p.ppid != os.Getppid() || p.rssBytes == 0 {
		t.Fatalf("own stat: %+v %v", p, err)
	}
	if _, err := parseProcStat(1, fields[:10], 4096); err == nil {
		t.Error("short stat accepted")
	}
	bad := slices.Clone(fields)
	bad[11] = []byte("x")
	if _, err := parseProcStat(1, bad, 4096); err == nil {
		t.Error("non-numeric utime accepted")
	}
}
