package fingerprint

import (
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
)

func TestParseCPUInfo(t *testing.T) {
	in := "processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 2445.406\n\nprocessor\t: 1\ncpu MHz\t\t: 1200.000\n"
	mhz, n := ParseCPUInfo(strings.NewReader(in))
	if mhz != 2445.406 || n != 2 {
		t.Fatalf("mhz %v processors %d", mhz, n)
	}
	mhz, n = ParseCPUInfo(strings.NewReader("processor : 0\nBogoMIPS : 50.00\n"))
	if mhz != 0 || n != 1 {
		t.Fatalf("without MHz: %v %d", mhz, n)
	}
	if got := TotalCompute(4, 0); got != 4*DefaultCoreMHz {
		t.Fatalf("fallback compute %d", got)
	}
	if got := TotalCompute(2, 2445.4); got != 4890 {
		t.Fatalf("compute %d", got)
	}
}

func TestParseMemInfo(t *testing.T) {
	n, ok := ParseMemInfo(strings.NewReader("MemFree: 10 kB\nMemTotal:       16318404 kB\n"))
	if !ok || n != 16318404*1024 {
		t.Fatalf("%d %v", n, ok)
	}
	if _, ok := ParseMemInfo(strings.NewReader("MemTotal: lots\n")); ok {
		t.Fatal("garbage parsed")
	}
}

func TestParseOSRelease(t *testing.T) {
	name, v := ParseOSRelease(strings.NewReader("NAME=\"Ubuntu\"\nID=ubuntu\nVERSION_ID=\"24.04\"\n"))
	if name != "ubuntu" || v != "24.04" {
		t.Fatalf("%q %q", name, v)
	}
}

// unhealthy is a driver that reports itself unusable.
type unhealthy struct{ drivers.Driver }

func (unhealthy) Name() string { return "broken" }
func (unhealthy) Fingerprint() drivers.Fingerprint {
	return drivers.Fingerprint{Attributes: map[string]string{"driver.broken.x": "y"}, HealthDescription: "no"}
}

func TestNodeFingerprint(t *testing.T) {
	r := Node(Input{
		DataDir: t.TempDir(), CPUTotalMHz: 3000, MemoryTotalMB: 2048, Version: "1.2.3",
		Drivers: []drivers.Driver{mock.New(mock.Options{}), unhealthy{}},
	})
	a := r.Attributes
	for _, k := range []string{"kernel.name", "os.name", "cpu.arch", "cpu.numcores", "unique.hostname"} {
		if a[k] == "" {
			t.Errorf("attribute %s missing", k)
		}
	}
	if a["cpu.totalcompute"] != "3000" || a["memory.totalbytes"] != strconv.Itoa(2048<<20) ||
		a["nomad.version"] != "1.2.3" || a["drover.version"] != "1.2.3" ||
		a["unique.network.ip-address"] != "127.0.0.1" {
		t.Fatalf("attributes %v", a)
	}
	if a["driver.mock"] != "1" || a["driver.broken"] != "" || a["driver.broken.x"] != "" {
		t.Fatalf("driver attributes %v", a)
	}
	if !r.Drivers["mock"].Healthy || r.Drivers["broken"].Healthy || !r.Drivers["broken"].Detected {
		t.Fatalf("drivers %+v %+v", r.Drivers["mock"], r.Drivers["broken"])
	}
	res := r.Resources
	if res.Cpu.CpuShares != 3000 || res.Memory.MemoryMB != 2048 || res.Disk.DiskMB <= 0 ||
		res.MinDynamicPort != 20000 || res.MaxDynamicPort != 32000 {
		t.Fatalf("resources %+v", res)
	}
}

// absent is a driver whose runtime is missing (no Docker daemon answers),
// though it claims to be healthy.
type absent struct{ drivers.Driver }

func (absent) Name() string { return "absent" }
func (absent) Fingerprint() drivers.Fingerprint {
	return drivers.Fingerprint{Undetected: true, Healthy: true, Attributes: map[string]string{"driver.absent.version": "1"}}
}

func TestUndetectedDriverIsNeitherDetectedNorHealthy(t *testing.T) {
	r := Node(Input{DataDir: t.TempDir(), Drivers: []drivers.Driver{absent{}}})
	if d := r.Drivers["absent"]; d == nil || d.Detected || d.Healthy {
		t.Fatalf("driver info %+v, want undetected and unhealthy", d)
	}
	if r.Attributes["driver.absent"] != "" || r.Attributes["driver.absent.version"] != "" {
		t.Fatalf("attributes %v", r.Attributes)
	}
}
