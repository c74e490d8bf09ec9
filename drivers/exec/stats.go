package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/opencontainers/cgroups"

	"github.com/droverhq/drover/drivers"
)

// What exec measures, in Nomad's names: its cgroup's counters, which
// differ between cgroup v1 and v2.
var (
	measuredMemoryV1 = []string{drivers.MeasuredRSS, drivers.MeasuredCache, drivers.MeasuredSwap, drivers.MeasuredUsage, drivers.MeasuredMaxUsage, drivers.MeasuredKernelUsage, drivers.MeasuredKernelMaxUsage}
	measuredMemoryV2 = []string{drivers.MeasuredRSS, drivers.MeasuredCache, drivers.MeasuredSwap, drivers.MeasuredUsage}
	measuredCPU      = []string{drivers.MeasuredSystemMode, drivers.MeasuredUserMode, drivers.MeasuredPercent, drivers.MeasuredThrottledPeriods, drivers.MeasuredThrottledTime}
)

// Stats reads the task's cgroup: memory in use (resident, page cache,
// swap, all of it and its peak) and CPU time (user, system, total, and
// the quota's throttling). The task is one unit: Pids stays empty.
func (d *Driver) Stats(ctx context.Context, h *drivers.TaskHandle) (*drivers.TaskUsage, error) {
	t, err := d.running(h)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := time.Now()
	s, err := t.c.Stats()
	if err != nil {
		t.mu.Lock()
		exited := t.exited
		t.mu.Unlock()
		if exited {
			return nil, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
		}
		return nil, fmt.Errorf("reading the cgroup of %s: %w", h.ID(), err)
	}
	if s.CgroupStats == nil {
		return nil, fmt.Errorf("%w: %s has no cgroup", drivers.ErrTaskNotFound, h.ID())
	}
	return cgroupUsage(s.CgroupStats, now, cgroups.IsCgroup2UnifiedMode()), nil
}

// cgroupUsage maps a cgroup's counters onto a sample.
func cgroupUsage(s *cgroups.Stats, now time.Time, v2 bool) *drivers.TaskUsage {
	u := &drivers.TaskUsage{Timestamp: now}
	m := s.MemoryStats
	u.Memory.Usage = m.Usage.Usage
	if v2 {
		u.Memory.RSS = m.Stats["anon"]
		u.Memory.Cache = m.Stats["file"]
		u.Memory.Swap = m.SwapOnlyUsage.Usage
		u.Memory.Measured = measuredMemoryV2
	} else {
		u.Memory.RSS = m.Stats["total_rss"]
		if u.Memory.RSS == 0 {
			u.Memory.RSS = m.Stats["rss"]
		}
		u.Memory.Cache = m.Stats["total_cache"]
		if u.Memory.Cache == 0 {
			u.Memory.Cache = m.Cache
		}
		u.Memory.Swap = m.Stats["total_swap"]
		u.Memory.MaxUsage = m.Usage.MaxUsage
		u.Memory.KernelUsage = m.KernelUsage.Usage
		u.Memory.KernelMaxUsage = m.KernelUsage.MaxUsage
		u.Memory.Measured = measuredMemoryV1
	}
	c := s.CpuStats
	u.CPU.User = time.Duration(c.CpuUsage.UsageInUsermode)
	u.CPU.System = time.Duration(c.CpuUsage.UsageInKernelmode)
	u.CPU.Total = time.Duration(c.CpuUsage.TotalUsage)
	u.CPU.ThrottledPeriods = c.ThrottlingData.ThrottledPeriods
	u.CPU.ThrottledTime = time.Duration(c.ThrottlingData.ThrottledTime)
	u.CPU.Measured = measuredCPU
	return u
}
