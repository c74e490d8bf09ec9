package docker

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docker/go-connections/nat"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// These tests need no daemon: they check what the driver would ask for.

func specFor(t *testing.T, cfg *drivers.TaskConfig, volumes bool) (*spec, error) {
	t.Helper()
	dc, errs := structs.ParseDockerConfig(cfg.Config)
	if len(errs) > 0 {
		t.Fatalf("config: %v", errs)
	}
	return buildSpec(cfg, dc, volumes)
}

func taskDirs(t *testing.T) (taskDir, allocDir string) {
	root := t.TempDir()
	taskDir, allocDir = filepath.Join(root, "web"), filepath.Join(root, "alloc")
	for _, d := range []string{taskDir, allocDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return taskDir, allocDir
}

func TestSpecResourcesCommandAndMounts(t *testing.T) {
	taskDir, allocDir := taskDirs(t)
	cfg := &drivers.TaskConfig{
		AllocID: "a1", TaskName: "web", TaskDir: taskDir, AllocDir: allocDir, NodeID: "n1", User: "nobody",
		Env: map[string]string{"B": "2", "A": "1"},
		Config: map[string]any{
			"image": "img:1", "command": "/bin/app", "args": []any{"-x"}, "entrypoint": []any{"/init"},
			"mount": []any{map[string]any{"type": "tmpfs", "target": "/scratch", "tmpfs_options": []any{map[string]any{"size": int64(1 << 20)}}}},
		},
		Resources: &structs.AllocatedTaskResources{
			Cpu:    structs.AllocatedCpuResources{CpuShares: 500},
			Memory: structs.AllocatedMemoryResources{MemoryMB: 128, MemoryMaxMB: 256},
		},
		LogConfig: *structs.DefaultLogConfig(),
	}
	sp, err := specFor(t, cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if sp.name != "web-a1" {
		t.Errorf("name %q", sp.name)
	}
	if !slices.Equal(sp.config.Cmd, []string{"/bin/app", "-x"}) || !slices.Equal(sp.config.Entrypoint, []string{"/init"}) {
		t.Errorf("cmd %v entrypoint %v", sp.config.Cmd, sp.config.Entrypoint)
	}
	if !slices.Equal(sp.config.Env, []string{"A=1", "B=2"}) || sp.config.User != "nobody" {
		t.Errorf("env %v user %q", sp.config.Env, sp.config.User)
	}
	h := sp.host
	if h.CPUShares != 500 || h.Memory != 256<<20 || h.MemoryReservation != 128<<20 || h.MemorySwap != 256<<20 {
		t.Errorf("cpu %d memory %d reservation %d swap %d", h.CPUShares, h.Memory, h.MemoryReservation, h.MemorySwap)
	}
	// memory_max = -1: no hard limit, memory the reservation.
	cfg.Resources.Memory.MemoryMaxMB = structs.MemoryMaxUnlimited
	if sp, err := specFor(t, cfg, false); err != nil || sp.host.Memory != 0 || sp.host.MemorySwap != 0 || sp.host.MemoryReservation != 128<<20 {
		t.Errorf("unlimited: %v memory %d swap %d reservation %d", err, sp.host.Memory, sp.host.MemorySwap, sp.host.MemoryReservation)
	}
	wantBinds := []string{allocDir + ":/alloc", taskDir + "/local:/local", taskDir + "/secrets:/secrets"}
	if !slices.Equal(h.Binds, wantBinds) {
		t.Errorf("binds %v, want %v", h.Binds, wantBinds)
	}
	if len(h.Mounts) != 1 || h.Mounts[0].Target != "/scratch" || h.Mounts[0].TmpfsOptions.SizeBytes != 1<<20 {
		t.Errorf("mounts %+v", h.Mounts)
	}
	if h.LogConfig.Type != "json-file" || h.LogConfig.Config["max-size"] != "10m" {
		t.Errorf("log config %+v", h.LogConfig)
	}
	if h.RestartPolicy.Name != "no" || h.NetworkMode != "bridge" {
		t.Errorf("restart %q network %q", h.RestartPolicy.Name, h.NetworkMode)
	}
}

func TestSpecPorts(t *testing.T) {
	ports := []structs.PortMapping{
		{Label: "http", Value: 23001, To: 80, HostIP: "127.0.0.1"},
		{Label: "admin", Value: 23002, HostIP: "127.0.0.1"},
	}
	for _, tc := range []struct {
		name  string
		mode  string
		list  []any
		want  map[string]string // container port/tcp -> host port
		error string
	}{
		{"listed", "host", []any{"http"}, map[string]string{"80/tcp": "23001"}, ""},
		{"to 0 maps the same port", "host", []any{"admin"}, map[string]string{"23002/tcp": "23002"}, ""},
		{"none listed in host mode", "host", nil, map[string]string{}, ""},
		{"none listed in bridge mode, by a client before the pause container: all", "bridge", nil, map[string]string{"80/tcp": "23001", "23002/tcp": "23002"}, ""},
		{"unknown label", "host", []any{"db"}, nil, `"db" is not a port`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &drivers.TaskConfig{AllocID: "a", TaskName: "t", Ports: ports, NetworkMode: tc.mode,
				Config: map[string]any{"image": "img"}}
			if tc.list != nil {
				cfg.Config["ports"] = tc.list
			}
			sp, err := specFor(t, cfg, false)
			if tc.error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.error) || !errors.Is(err, drivers.ErrInvalidConfig) {
					t.Fatalf("error %v, want %q", err, tc.error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for p, bs := range sp.host.PortBindings {
				if p.Proto() != "tcp" {
					if _, ok := sp.host.PortBindings[nat.Port(p.Port()+"/tcp")]; !ok {
						t.Errorf("udp %s without tcp", p)
					}
					continue
				}
				for _, b := range bs {
					if b.HostIP != "127.0.0.1" {
						t.Errorf("%s bound on %q", p, b.HostIP)
					}
					got[string(p)] = b.HostPort
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("bindings %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("bindings %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestSpecRefusesHostPathsUnlessEnabled(t *testing.T) {
	taskDir, allocDir := taskDirs(t)
	for _, tc := range []struct {
		volumes []any
		mount   map[string]any
		enabled bool
		want    error
	}{
		{volumes: []any{"/etc:/etc2"}, want: errVolumesDisabled},
		{volumes: []any{"/etc:/etc2"}, enabled: true},
		{volumes: []any{allocDir + "/data:/d"}}, // an absolute path inside the allocation
		{mount: map[string]any{"type": "bind", "source": "/var", "target": "/v"}, want: errVolumesDisabled},
		{mount: map[string]any{"type": "volume", "source": "cache", "target": "/c"}, want: errVolumesDisabled},
		{mount: map[string]any{"type": "volume", "target": "/c"}}, // anonymous: removed with the container
		{mount: map[string]any{"type": "volume", "source": "cache", "target": "/c"}, enabled: true},
	} {
		cfg := &drivers.TaskConfig{AllocID: "a", TaskName: "web", TaskDir: taskDir, AllocDir: allocDir,
			Config: map[string]any{"image": "img"}}
		if tc.volumes != nil {
			cfg.Config["volumes"] = tc.volumes
		}
		if tc.mount != nil {
			cfg.Config["mount"] = []any{tc.mount}
		}
		_, err := specFor(t, cfg, tc.enabled)
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%v %v enabled=%v: %v, want %v", tc.volumes, tc.mount, tc.enabled, err, tc.want)
		}
	}
}

func TestRotatingFile(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "web.stdout")
	r, err := openRotating(dir, base, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("x", 600<<10))
	for range 5 {
		if _, err := r.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	// 600 KiB chunks in 1 MiB files: one per file, five files, the last
	// two kept.
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"web.stdout.3", "web.stdout.4"}) {
		t.Fatalf("files %v", names)
	}
	// Reopening appends to the live (highest) file.
	r, err = openRotating(dir, base, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if fi, _ := os.Stat(base + ".4"); fi.Size() != 600<<10+1 {
		t.Fatalf("live file size %d", fi.Size())
	}
}

func TestPullErr(t *testing.T) {
	stream := `{"status":"Pulling from x"}
{"errorDetail":{"message":"manifest unknown"},"error":"manifest unknown"}
`
	if err := pullErr(strings.NewReader(stream)); err == nil || err.Error() != "manifest unknown" {
		t.Fatalf("pullErr = %v", err)
	}
	if err := pullErr(strings.NewReader(`{"status":"Downloaded newer image"}`)); err != nil {
		t.Fatalf("pullErr = %v", err)
	}
}
