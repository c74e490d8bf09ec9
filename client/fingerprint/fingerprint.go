// Package fingerprint learns what a client node is: the attributes that
// job constraints match (kernel.name, cpu.arch, unique.hostname, …), the
// resources the scheduler may hand out, and the drivers it can run.
//
// The readers of /proc and /etc files are pure functions over an
// io.Reader; Node wires them to the real files and the running system.
// Anything that cannot be read falls back to a safe value rather than
// failing the client: a node with a conservative fingerprint still runs
// work, a client that refuses to start does not.
package fingerprint

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// DefaultCoreMHz is the speed assumed per core when /proc/cpuinfo gives
// none (containers, some ARM machines).
const DefaultCoreMHz = 1000

// Input is what the fingerprint cannot learn by itself: overrides from the
// client's configuration and the drivers it was given.
type Input struct {
	// DataDir is where allocations live; its file system's free space is
	// the node's disk.
	DataDir string
	// CPUTotalMHz and MemoryTotalMB, when positive, replace what the
	// machine reports.
	CPUTotalMHz   int64
	MemoryTotalMB int64
	// MinDynamicPort and MaxDynamicPort bound the ports the scheduler
	// assigns (Nomad's defaults when zero).
	MinDynamicPort int
	MaxDynamicPort int
	// Version is the client's version, reported as nomad.version and
	// drover.version.
	Version string
	Drivers []drivers.Driver
	// Now stamps the drivers' UpdateTime.
	Now func() time.Time
}

// Result is a node's fingerprint.
type Result struct {
	Attributes map[string]string
	Resources  *structs.NodeResources
	Drivers    map[string]*structs.DriverInfo
}

// Node fingerprints the machine the client runs on.
func Node(in Input) *Result {
	if in.Now == nil {
		in.Now = time.Now
	}
	attrs := map[string]string{
		"kernel.name":               runtime.GOOS,
		"cpu.arch":                  runtime.GOARCH,
		"unique.network.ip-address": "127.0.0.1",
		"nomad.version":             in.Version,
		"drover.version":            in.Version,
	}
	if h, err := os.Hostname(); err == nil {
		attrs["unique.hostname"] = h
	}
	attrs["os.name"] = runtime.GOOS
	if f, err := os.Open("/etc/os-release"); err == nil {
		if name, version := ParseOSRelease(f); name != "" {
			attrs["os.name"] = name
			if version != "" {
				attrs["os.version"] = version
			}
		}
		_ = f.Close()
	}
	if v := kernelVersion(); v != "" {
		attrs["kernel.version"] = v
	}

	cores := runtime.NumCPU()
	mhz := 0.0
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		mhz, _ = ParseCPUInfo(f)
		_ = f.Close()
	}
	total := TotalCompute(cores, mhz)
	if in.CPUTotalMHz > 0 {
		total = in.CPUTotalMHz
	}
	attrs["cpu.numcores"] = strconv.Itoa(cores)
	attrs["cpu.totalcompute"] = strconv.FormatInt(total, 10)
	if mhz > 0 {
		attrs["cpu.frequency"] = strconv.Itoa(int(mhz))
	}

	var memBytes int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		memBytes, _ = ParseMemInfo(f)
		_ = f.Close()
	}
	if in.MemoryTotalMB > 0 {
		memBytes = in.MemoryTotalMB << 20
	}
	if memBytes > 0 {
		attrs["memory.totalbytes"] = strconv.FormatInt(memBytes, 10)
	}

	res := &structs.NodeResources{
		Cpu:            structs.NodeCpuResources{CpuShares: total, TotalCpuCores: uint16(min(cores, 1<<16-1))},
		Memory:         structs.NodeMemoryResources{MemoryMB: memBytes >> 20},
		Disk:           structs.NodeDiskResources{DiskMB: freeDiskMB(in.DataDir)},
		MinDynamicPort: in.MinDynamicPort,
		MaxDynamicPort: in.MaxDynamicPort,
	}
	if res.MinDynamicPort <= 0 {
		res.MinDynamicPort = structs.DefaultMinDynamicPort
	}
	if res.MaxDynamicPort <= 0 {
		res.MaxDynamicPort = structs.DefaultMaxDynamicPort
	}

	drv := make(map[string]*structs.DriverInfo, len(in.Drivers))
	for _, d := range in.Drivers {
		fp := d.Fingerprint()
		info := &structs.DriverInfo{
			Attributes: map[string]string{}, Detected: !fp.Undetected, Healthy: fp.Healthy && !fp.Undetected,
			HealthDescription: fp.HealthDescription, UpdateTime: in.Now(),
		}
		for k, v := range fp.Attributes {
			info.Attributes[k] = v
			if info.Healthy {
				attrs[k] = v
			}
		}
		if info.Healthy {
			attrs["driver."+d.Name()] = "1"
		}
		drv[d.Name()] = info
	}
	return &Result{Attributes: attrs, Resources: res, Drivers: drv}
}

// TotalCompute is the node's CPU in MHz: cores × the per-core speed, or
// cores × DefaultCoreMHz when the speed is unknown.
func TotalCompute(cores int, mhz float64) int64 {
	if cores < 1 {
		cores = 1
	}
	if mhz <= 0 {
		mhz = DefaultCoreMHz
	}
	return int64(float64(cores) * mhz)
}

// kernelVersion is the kernel's release ("6.8.0-45-generic").
func kernelVersion() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err == nil {
		return trimSpace(string(b))
	}
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return ""
	}
	out := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

// freeDiskMB is the space available to the client under dir, 0 when it
// cannot be learnt.
func freeDiskMB(dir string) int64 {
	if dir == "" {
		return 0
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0
	}
	return int64(st.Bavail) * int64(st.Bsize) >> 20
}
