package structs

// The client's resource usage answers, in Nomad's JSON shapes: GET
// /v1/client/allocation/{id}/stats answers an AllocResourceUsage, GET
// /v1/client/stats a HostStats. Timestamps are Unix nanoseconds.

// AllocResourceUsage is an allocation's usage: its tasks', and their sum.
type AllocResourceUsage struct {
	ResourceUsage *ResourceUsage
	Tasks         map[string]*TaskResourceUsage
	Timestamp     int64
}

// TaskResourceUsage is one task's usage and that of each of its processes,
// by PID.
type TaskResourceUsage struct {
	ResourceUsage *ResourceUsage
	Timestamp     int64
	Pids          map[string]*ResourceUsage
}

// ResourceUsage is memory and CPU usage. DeviceStats is always empty:
// drover schedules no devices.
type ResourceUsage struct {
	MemoryStats *MemoryStats
	CpuStats    *CpuStats
	DeviceStats []*DeviceGroupStats
}

// MemoryStats is memory in use, in bytes. Measured names the fields
// filled ("RSS", "Cache", "Swap", "Usage", "Max Usage", "Kernel Usage",
// "Kernel Max Usage").
type MemoryStats struct {
	RSS            uint64
	Cache          uint64
	Swap           uint64
	Usage          uint64
	MaxUsage       uint64
	KernelUsage    uint64
	KernelMaxUsage uint64
	Measured       []string
}

// CpuStats is CPU usage: SystemMode, UserMode and Percent are percentages
// of one core over the last sampling interval (Percent may exceed 100 on
// several cores), TotalTicks the MHz that makes, ThrottledTime in
// nanoseconds. Measured names the fields filled ("Percent", "User Mode",
// "System Mode", "Throttled Periods", "Throttled Time").
type CpuStats struct {
	SystemMode       float64
	UserMode         float64
	TotalTicks       float64
	ThrottledPeriods uint64
	ThrottledTime    uint64
	Percent          float64
	Measured         []string
}

// DeviceGroupStats is Nomad's statistics of a device group; drover has
// none to report.
type DeviceGroupStats struct {
	Vendor string
	Type   string
	Name   string
}

// Add adds other's figures to u's and joins their Measured lists, as an
// allocation's usage is the sum of its tasks'.
func (u *ResourceUsage) Add(other *ResourceUsage) {
	if other == nil {
		return
	}
	if other.MemoryStats != nil {
		if u.MemoryStats == nil {
			u.MemoryStats = &MemoryStats{}
		}
		m, o := u.MemoryStats, other.MemoryStats
		m.RSS += o.RSS
		m.Cache += o.Cache
		m.Swap += o.Swap
		m.Usage += o.Usage
		m.MaxUsage += o.MaxUsage
		m.KernelUsage += o.KernelUsage
		m.KernelMaxUsage += o.KernelMaxUsage
		m.Measured = joinMeasured(m.Measured, o.Measured)
	}
	if other.CpuStats != nil {
		if u.CpuStats == nil {
			u.CpuStats = &CpuStats{}
		}
		c, o := u.CpuStats, other.CpuStats
		c.SystemMode += o.SystemMode
		c.UserMode += o.UserMode
		c.TotalTicks += o.TotalTicks
		c.ThrottledPeriods += o.ThrottledPeriods
		c.ThrottledTime += o.ThrottledTime
		c.Percent += o.Percent
		c.Measured = joinMeasured(c.Measured, o.Measured)
	}
	u.DeviceStats = append(u.DeviceStats, other.DeviceStats...)
}

// joinMeasured returns a with b's names that a lacks, in order.
func joinMeasured(a, b []string) []string {
	out := append([]string{}, a...)
next:
	for _, s := range b {
		for _, have := range out {
			if have == s {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// HostStats is the client host's usage: memory, each CPU, the disks, the
// file system of the allocations' directories, the time since boot in
// seconds, and the MHz all CPUs are busy for (CPUTicksConsumed).
type HostStats struct {
	Memory           *HostMemoryStats
	CPU              []*HostCPUStats
	DiskStats        []*HostDiskStats
	AllocDirStats    *HostDiskStats
	DeviceStats      []*DeviceGroupStats
	Uptime           uint64
	Timestamp        int64
	CPUTicksConsumed float64
}

// HostMemoryStats is the host's memory, in bytes.
type HostMemoryStats struct {
	Total     uint64
	Available uint64
	Used      uint64
	Free      uint64
}

// HostCPUStats is one CPU's time split over the last sampling interval,
// in percent.
type HostCPUStats struct {
	CPU    string
	User   float64
	System float64
	Idle   float64
}

// HostDiskStats is one file system's size and use, in bytes and percent.
type HostDiskStats struct {
	Device            string
	Mountpoint        string
	Size              uint64
	Used              uint64
	Available         uint64
	UsedPercent       float64
	InodesUsedPercent float64
}
