package allocrunner

import (
	"context"
	"sync"
	"testing"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// imageDriver is the mock driver claiming image isolation, as docker's,
// that records the task config it is given.
type imageDriver struct {
	*mock.Driver
	mu  sync.Mutex
	cfg *drivers.TaskConfig
}

func (d *imageDriver) Name() string { return "docker" }
func (d *imageDriver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{FSIsolation: drivers.FSIsolationImage}
}
func (d *imageDriver) Start(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	d.mu.Lock()
	d.cfg = cfg
	d.mu.Unlock()
	return nil, drivers.ErrStartFailed // the config is all this test wants
}

// The docker driver makes a bridge group's namespace: its pause
// container.
func (d *imageDriver) CreateNetwork(context.Context, *drivers.NetworkRequest) (*drivers.NetworkSandbox, bool, error) {
	return &drivers.NetworkSandbox{ContainerID: "pause", NetNSPath: "/run/docker/netns/p"}, true, nil
}
func (d *imageDriver) DestroyNetwork(context.Context, string, string) error { return nil }

// TestImageIsolatedTaskConfig: a task whose driver runs it in an image
// sees the allocation's directories where the driver mounts them, none of
// the client's variables, and gets the group's ports, network mode, job
// and node for its container.
func TestImageIsolatedTaskConfig(t *testing.T) {
	d := &imageDriver{Driver: mock.New(mock.Options{})}
	task := &structs.Task{Name: "web", Driver: "docker", User: "nobody",
		Config: map[string]any{"image": "img", "args": []any{"${NOMAD_TASK_DIR}/conf"}}}
	alloc := testAlloc(structs.JobTypeBatch, task)
	alloc.Job.Namespace = "default"
	alloc.Job.TaskGroups[0].Networks = []*structs.NetworkResource{{Mode: "bridge"}}
	alloc.AllocatedResources = &structs.AllocatedResources{
		Tasks:  map[string]*structs.AllocatedTaskResources{"web": {Memory: structs.AllocatedMemoryResources{MemoryMB: 64}}},
		Shared: structs.AllocatedSharedResources{Ports: []structs.PortMapping{{Label: "http", Value: 23456, To: 80, HostIP: "127.0.0.1"}}},
	}
	data := t.TempDir()
	ar, err := New(Config{
		Alloc: alloc, Node: &structs.Node{ID: "n1", Name: "box", Datacenter: "dc1"}, DataDir: data,
		Drivers: map[string]drivers.Driver{"docker": d}, HostEnv: map[string]string{"PATH": "/host/bin", "SECRET": "x"},
		Networks: &fakeNets{},
	})
	if err != nil {
		t.Fatal(err)
	}
	ar.Run()
	<-ar.Done() // the start fails and the policy gives up
	d.mu.Lock()
	cfg := d.cfg
	d.mu.Unlock()
	if cfg == nil {
		t.Fatal("the driver was never asked to start the task")
	}
	for k, want := range map[string]string{
		"NOMAD_TASK_DIR": "/local", "NOMAD_ALLOC_DIR": "/alloc", "NOMAD_SECRETS_DIR": "/secrets",
		"NOMAD_PORT_http": "80", "NOMAD_HOST_PORT_http": "23456", "NOMAD_ADDR_http": "127.0.0.1:23456",
	} {
		if cfg.Env[k] != want {
			t.Errorf("env %s = %q, want %q", k, cfg.Env[k], want)
		}
	}
	for _, k := range []string{"PATH", "SECRET"} {
		if v, ok := cfg.Env[k]; ok {
			t.Errorf("client variable %s=%q reached the container", k, v)
		}
	}
	if args, _ := cfg.Config["args"].([]any); len(args) != 1 || args[0] != "/local/conf" {
		t.Errorf("args %v, want the container's path", cfg.Config["args"])
	}
	dir := NewAllocDir(data, alloc.ID)
	if cfg.AllocDir != dir.SharedDir() || cfg.TaskDir != dir.TaskDir("web") || cfg.NetworkMode != "bridge" ||
		cfg.NetNSPath != "/run/docker/netns/p" || cfg.NetworkContainerID != "pause" ||
		cfg.NodeID != "n1" || cfg.NodeName != "box" || cfg.JobID != "shop" || cfg.JobName != "shop" ||
		cfg.TaskGroup != "front" || cfg.Namespace != "default" || cfg.User != "nobody" ||
		len(cfg.Ports) != 1 || cfg.Ports[0].Value != 23456 || cfg.Resources.Memory.MemoryMB != 64 {
		t.Errorf("task config %+v", cfg)
	}
}
