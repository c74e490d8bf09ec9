package drivers

import (
	"context"
	"errors"
	"time"
)

// ErrStatsNotSupported: the driver cannot measure its tasks' usage (it
// does not implement StatsDriver).
var ErrStatsNotSupported = errors.New("driver cannot measure its tasks' resource usage")

// StatsDriver is implemented by drivers that can measure the resources
// their running tasks use; the client serves what it returns at GET
// /v1/client/allocation/{id}/stats (see website/api/client.md). A driver
// without it is not an error: its tasks' usage is reported with nothing
// measured (empty Measured lists).
//
// Stats takes one sample of the task's usage now. It returns an error
// wrapping ErrTaskNotFound when the handle names no running task; the
// client then reports the task's last sample. It must not block for long
// (the caller bounds it with ctx): one read of the kernel's counters or
// one call to a daemon.
//
// The driver reports counters, not rates. CPU times are cumulative since
// the task started; the client turns two samples into Nomad's
// percentages (Percent, User Mode, System Mode) and MHz (TotalTicks), so
// that drivers need not keep samples of their own. Measured lists, in
// Nomad's names, what the driver filled:
//
//   - MemoryUsage.Measured: "RSS", "Cache", "Swap", "Usage", "Max Usage",
//     "Kernel Usage", "Kernel Max Usage".
//   - CPUUsage.Measured: "Percent" (Total is filled), "User Mode" (User),
//     "System Mode" (System), "Throttled Periods", "Throttled Time".
//
// raw_exec reads the task's process tree from /proc: RSS and Swap; User,
// System and Total (with the CPU time of the children the tree has
// reaped), and the same per process in Pids. A container driver maps its
// daemon's one-shot stats (docker: ContainerStats with stream=false, or
// ContainerStatsOneShot) onto the same fields: memory_stats.usage to
// Usage, max_usage to Max Usage, the cache or file counter of
// memory_stats.stats to Cache and, on cgroup v1, rss to RSS;
// cpu_stats.cpu_usage.total_usage to Total, usage_in_usermode and
// usage_in_kernelmode to User and System, throttling_data to the
// Throttled fields; Pids stays empty (a container is one unit).
type StatsDriver interface {
	Stats(ctx context.Context, h *TaskHandle) (*TaskUsage, error)
}

// TaskUsage is one sample of a task's resource usage.
type TaskUsage struct {
	// Timestamp is when the sample was taken.
	Timestamp time.Time
	Usage
	// Pids is the usage of each of the task's processes, by PID, for
	// drivers that see them (nil otherwise).
	Pids map[string]*ProcessUsage
}

// ProcessUsage is one process's part of a TaskUsage.
type ProcessUsage struct {
	// StartedAt is when the process started (its CPU times count from
	// then).
	StartedAt time.Time
	Usage
}

// Usage is memory in use and CPU time used.
type Usage struct {
	Memory MemoryUsage
	CPU    CPUUsage
}

// MemoryUsage is memory in use now, in bytes.
type MemoryUsage struct {
	RSS            uint64
	Cache          uint64
	Swap           uint64
	Usage          uint64
	MaxUsage       uint64
	KernelUsage    uint64
	KernelMaxUsage uint64
	// Measured names the fields filled, in Nomad's words (see
	// StatsDriver).
	Measured []string
}

// CPUUsage is CPU time used since the task (or process) started.
type CPUUsage struct {
	// User and System are the time spent in user and kernel mode; Total
	// is all of it (User+System when the driver measures both).
	User   time.Duration
	System time.Duration
	Total  time.Duration
	// ThrottledPeriods and ThrottledTime are the CPU quota's throttling
	// counters, for drivers that set one.
	ThrottledPeriods uint64
	ThrottledTime    time.Duration
	// Measured names the fields filled, in Nomad's words (see
	// StatsDriver).
	Measured []string
}

// Nomad's names of the measured statistics.
const (
	MeasuredRSS            = "RSS"
	MeasuredCache          = "Cache"
	MeasuredSwap           = "Swap"
	MeasuredUsage          = "Usage"
	MeasuredMaxUsage       = "Max Usage"
	MeasuredKernelUsage    = "Kernel Usage"
	MeasuredKernelMaxUsage = "Kernel Max Usage"

	MeasuredPercent          = "Percent"
	MeasuredUserMode         = "User Mode"
	MeasuredSystemMode       = "System Mode"
	MeasuredThrottledPeriods = "Throttled Periods"
	MeasuredThrottledTime    = "Throttled Time"
)
