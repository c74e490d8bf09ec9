package client

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/droverhq/drover/structs"
)

// HostStats measures the client's host, as Nomad's GET /v1/client/stats
// answers: memory, the time each CPU spent in user and system mode and
// idle since the last sample at least a second old (since boot at the
// first call), the MHz that makes busy (CPUTicksConsumed), the disks' and
// the allocation directory's file system's use, and the uptime. What
// cannot be read is left zero (and logged), never nil: the nomad CLI
// reads Memory and AllocDirStats unchecked.
func (a *Agent) HostStats(ctx context.Context) *structs.HostStats {
	now := a.clock.Now()
	out := &structs.HostStats{
		Memory: &structs.HostMemoryStats{}, CPU: []*structs.HostCPUStats{}, DiskStats: []*structs.HostDiskStats{},
		AllocDirStats: &structs.HostDiskStats{}, Timestamp: now.UnixNano(),
	}
	if vm, err := mem.VirtualMemoryWithContext(ctx); err == nil {
		out.Memory = &structs.HostMemoryStats{Total: vm.Total, Available: vm.Available, Used: vm.Used, Free: vm.Free}
	} else {
		a.logger.Debug("host memory stats", "error", err)
	}
	if times, err := cpu.TimesWithContext(ctx, true); err == nil {
		out.CPU, out.CPUTicksConsumed = a.host.cpu(now, times, a.mhzPerCore())
	} else {
		a.logger.Debug("host CPU stats", "error", err)
	}
	if up, err := host.UptimeWithContext(ctx); err == nil {
		out.Uptime = up
	}
	out.AllocDirStats, out.DiskStats = a.diskStats(ctx)
	return out
}

// diskStats measures the file system of the allocations' directory, and
// every disk partition (with that file system among them).
func (a *Agent) diskStats(ctx context.Context) (*structs.HostDiskStats, []*structs.HostDiskStats) {
	dir := filepath.Join(a.cfg.DataDir, "alloc")
	if _, err := os.Stat(dir); err != nil {
		dir = a.cfg.DataDir
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	allocDir := &structs.HostDiskStats{}
	if all, err := disk.PartitionsWithContext(ctx, true); err == nil {
		if p := mountOf(dir, all); p != nil {
			allocDir.Device, allocDir.Mountpoint = p.Device, p.Mountpoint
		}
	}
	if u, err := disk.UsageWithContext(ctx, dir); err == nil {
		fillDisk(allocDir, u)
	} else {
		a.logger.Debug("allocation directory's disk stats", "dir", dir, "error", err)
	}
	disks := []*structs.HostDiskStats{}
	seen := false
	if parts, err := disk.PartitionsWithContext(ctx, false); err == nil {
		for _, p := range parts {
			u, err := disk.UsageWithContext(ctx, p.Mountpoint)
			if err != nil {
				continue
			}
			d := &structs.HostDiskStats{Device: p.Device, Mountpoint: p.Mountpoint}
			fillDisk(d, u)
			disks = append(disks, d)
			seen = seen || p.Mountpoint == allocDir.Mountpoint
		}
	}
	if !seen {
		d := *allocDir
		disks = append(disks, &d)
	}
	return allocDir, disks
}

func fillDisk(d *structs.HostDiskStats, u *disk.UsageStat) {
	d.Size, d.Used, d.Available = u.Total, u.Used, u.Free
	d.UsedPercent, d.InodesUsedPercent = u.UsedPercent, u.InodesUsedPercent
}

// mountOf returns the partition mounted deepest above path.
func mountOf(path string, parts []disk.PartitionStat) *disk.PartitionStat {
	var best *disk.PartitionStat
	for i, p := range parts {
		mp := p.Mountpoint
		if mp == "" {
			continue
		}
		under := path == mp || mp == "/" || strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/")
		if under && (best == nil || len(mp) >= len(best.Mountpoint)) {
			best = &parts[i]
		}
	}
	return best
}

// hostSampler keeps the host's recent CPU times, to turn them into rates.
type hostSampler struct {
	mu      sync.Mutex
	samples []cpuSample // oldest first
}

type cpuSample struct {
	at    time.Time
	times map[string]cpu.TimesStat
}

func newHostSampler() *hostSampler { return &hostSampler{} }

// cpu turns the CPUs' cumulative times into percentages since the newest
// sample at least rateWindow old (else the oldest kept; since boot at the
// first call), and the MHz the busy share makes over all CPUs.
func (h *hostSampler) cpu(now time.Time, times []cpu.TimesStat, mhzPerCore float64) ([]*structs.HostCPUStats, float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	kept := h.samples[:0]
	for _, s := range h.samples {
		if s.at.Before(now) {
			kept = append(kept, s)
		}
	}
	h.samples = kept
	var base map[string]cpu.TimesStat
	at := -1
	for i, s := range h.samples {
		if now.Sub(s.at) >= rateWindow {
			base, at = s.times, i
		}
	}
	if base == nil && len(h.samples) > 0 {
		base, at = h.samples[0].times, 0
	}
	if at > 0 {
		h.samples = h.samples[at:]
	}
	cur := make(map[string]cpu.TimesStat, len(times))
	for _, t := range times {
		cur[t.CPU] = t
	}
	h.samples = append(h.samples, cpuSample{at: now, times: cur})
	if len(h.samples) > maxSamples {
		h.samples = h.samples[len(h.samples)-maxSamples:]
	}
	return cpuPercents(times, base, mhzPerCore)
}

// cpuPercents computes each CPU's user, system and idle shares between
// base (zero when a CPU is missing from it) and times, and the MHz the
// busy share makes.
func cpuPercents(times []cpu.TimesStat, base map[string]cpu.TimesStat, mhzPerCore float64) ([]*structs.HostCPUStats, float64) {
	out := make([]*structs.HostCPUStats, 0, len(times))
	var ticks float64
	for _, t := range times {
		b := base[t.CPU]
		total := cpuTotal(t) - cpuTotal(b)
		st := &structs.HostCPUStats{CPU: t.CPU}
		if total > 0 {
			st.User = share(t.User-b.User, total)
			st.System = share(t.System-b.System, total)
			st.Idle = share(t.Idle-b.Idle, total)
			ticks += (100 - st.Idle) / 100 * mhzPerCore
		}
		out = append(out, st)
	}
	return out, ticks
}

// cpuTotal is all of a CPU's time (guest time is within user time).
func cpuTotal(t cpu.TimesStat) float64 {
	return t.User + t.System + t.Idle + t.Nice + t.Iowait + t.Irq + t.Softirq + t.Steal
}

func share(part, total float64) float64 {
	if part <= 0 {
		return 0
	}
	return min(part/total*100, 100)
}
