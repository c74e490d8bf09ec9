package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/droverhq/drover/drivers"
)

var _ drivers.StatsDriver = (*Driver)(nil)

// Stats takes one sample of the container's usage from the daemon
// (one-shot stats, no stream) and maps it as drivers.StatsDriver says:
// memory usage, its peak, the page cache and (cgroup v1) RSS and swap;
// CPU time in user and kernel mode and in all, and the quota's
// throttling. A container is one unit: there are no per-process figures.
func (d *Driver) Stats(ctx context.Context, h *drivers.TaskHandle) (*drivers.TaskUsage, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, err
	}
	if _, done := t.exit.Result(); done {
		return nil, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	r, err := d.client.ContainerStatsOneShot(ctx, t.containerID)
	if err != nil {
		return nil, fmt.Errorf("stats of %s: %w", h.ID(), err)
	}
	defer r.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil {
		return nil, fmt.Errorf("stats of %s: %w", h.ID(), err)
	}
	return usageOf(&s), nil
}

// usageOf maps the daemon's stats onto a drivers.TaskUsage.
func usageOf(s *container.StatsResponse) *drivers.TaskUsage {
	u := &drivers.TaskUsage{Timestamp: s.Read}
	if u.Timestamp.IsZero() {
		u.Timestamp = time.Now()
	}
	m, ms := &u.Memory, s.MemoryStats
	m.Usage, m.Measured = ms.Usage, []string{drivers.MeasuredUsage}
	if ms.MaxUsage > 0 { // cgroup v1 only
		m.MaxUsage = ms.MaxUsage
		m.Measured = append(m.Measured, drivers.MeasuredMaxUsage)
	}
	if v, ok := ms.Stats["cache"]; ok { // cgroup v1
		m.Cache = v
		m.Measured = append(m.Measured, drivers.MeasuredCache)
	} else if v, ok := ms.Stats["file"]; ok { // cgroup v2
		m.Cache = v
		m.Measured = append(m.Measured, drivers.MeasuredCache)
	}
	if v, ok := ms.Stats["rss"]; ok { // cgroup v1
		m.RSS = v
		m.Measured = append(m.Measured, drivers.MeasuredRSS)
	}
	if v, ok := ms.Stats["swap"]; ok { // cgroup v1 with swap accounting
		m.Swap = v
		m.Measured = append(m.Measured, drivers.MeasuredSwap)
	}
	c, cs := &u.CPU, s.CPUStats
	c.Total = time.Duration(cs.CPUUsage.TotalUsage)
	c.User = time.Duration(cs.CPUUsage.UsageInUsermode)
	c.System = time.Duration(cs.CPUUsage.UsageInKernelmode)
	c.ThrottledPeriods = cs.ThrottlingData.ThrottledPeriods
	c.ThrottledTime = time.Duration(cs.ThrottlingData.ThrottledTime)
	c.Measured = []string{drivers.MeasuredPercent, drivers.MeasuredUserMode, drivers.MeasuredSystemMode,
		drivers.MeasuredThrottledPeriods, drivers.MeasuredThrottledTime}
	return u
}
