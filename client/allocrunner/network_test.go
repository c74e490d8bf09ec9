package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/client/network"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// fakeNets records the network calls of the alloc runner.
type fakeNets struct {
	mu       sync.Mutex
	calls    []string
	setupErr error
	known    map[string]*network.Status // what Status finds
	// setupInFails: how many SetupIn calls fail first.
	setupInFails int
}

func (f *fakeNets) note(s string) { f.mu.Lock(); f.calls = append(f.calls, s); f.mu.Unlock() }

func (f *fakeNets) Setup(_ context.Context, id string, ports []network.Port) (*network.Status, error) {
	f.note("setup " + id)
	if f.setupErr != nil {
		return nil, f.setupErr
	}
	if len(ports) != 1 || ports[0] != (network.Port{Label: "http", HostIP: "10.0.0.5", HostPort: 23456, ContainerPort: 8080}) {
		return nil, errors.New("unexpected ports")
	}
	return &network.Status{NetNSPath: "/var/run/netns/" + id, InterfaceName: "eth0", Address: "172.26.64.3"}, nil
}

func (f *fakeNets) SetupIn(_ context.Context, id, netns string, ports []network.Port) (*network.Status, error) {
	f.note("setupin " + id + " " + netns)
	f.mu.Lock()
	fail := f.setupInFails > 0
	f.setupInFails--
	f.mu.Unlock()
	if fail {
		return nil, errors.New("eth0 already exists")
	}
	return &network.Status{NetNSPath: netns, InterfaceName: "eth0", Address: "172.26.64.4"}, nil
}

func (f *fakeNets) Status(id string) (*network.Status, error) {
	f.note("status " + id)
	if st := f.known[id]; st != nil {
		return st, nil
	}
	return nil, network.ErrNotFound
}

func (f *fakeNets) Teardown(_ context.Context, id string) error {
	f.note("teardown " + id)
	return nil
}

func (f *fakeNets) got() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, "; ")
}

func bridgeAlloc(runFor string) *structs.Allocation {
	a := testAlloc(structs.JobTypeBatch, mockTask("web", map[string]any{"run_for": runFor}))
	a.Job.TaskGroups[0].Networks = []*structs.NetworkResource{{Mode: "bridge"}}
	a.AllocatedResources = &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
		Ports: []structs.PortMapping{{Label: "http", Value: 23456, To: 8080, HostIP: "10.0.0.5"}}}}
	return a
}

func newBridgeRunner(t *testing.T, data string, c clock.Clock, nets Networks, a *structs.Allocation, rec *recorder) *AllocRunner {
	t.Helper()
	ar, err := New(Config{
		Alloc: a, Node: &structs.Node{ID: "n1", Datacenter: "dc1"}, DataDir: data,
		Drivers: map[string]drivers.Driver{"mock": mock.New(mock.Options{Clock: c})}, Clock: c, OnUpdate: rec.on,
		Networks: nets,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ar
}

// A bridge allocation's namespace is made before its tasks, which get
// its path and address, and removed once they have ended.
func TestBridgeNamespaceAroundTheTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		nets := &fakeNets{}
		a := bridgeAlloc("2s")
		ar := newBridgeRunner(t, t.TempDir(), c, nets, a, rec)
		if got := nets.got(); got != "teardown "+a.ID+"; setup "+a.ID {
			t.Fatalf("calls before Run: %s", got)
		}
		ar.Run()
		synctest.Wait()
		ar.mu.Lock()
		h := ar.handles["web"]
		ar.mu.Unlock()
		if h == nil || h.Config.NetNSPath != "/var/run/netns/"+a.ID || h.Config.Env["NOMAD_ALLOC_IP_http"] != "172.26.64.3" ||
			h.Config.Env["NOMAD_ALLOC_ADDR_http"] != "172.26.64.3:8080" || h.Config.Env["NOMAD_PORT_http"] != "8080" {
			t.Fatalf("the task's config: %+v", h)
		}
		if u := rec.last(); u.NetworkStatus == nil || u.NetworkStatus.Address != "172.26.64.3" || u.NetworkStatus.InterfaceName != "eth0" {
			t.Fatalf("reported network %+v", u.NetworkStatus)
		}
		c.Advance(2 * time.Second)
		<-ar.Done()
		if got := nets.got(); !strings.HasSuffix(got, "; teardown "+a.ID) {
			t.Fatalf("calls after the tasks ended: %s", got)
		}
	})
}

// A failed setup fails the allocation without running a task: each
// task dead and failed with a Setup Failure event giving the reason.
func TestBridgeSetupFailureFailsEveryTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		nets := &fakeNets{setupErr: errors.New("CNI plugin not found: \"bridge\"")}
		ar := newBridgeRunner(t, t.TempDir(), c, nets, bridgeAlloc("2s"), rec)
		ar.Run()
		<-ar.Done()
		u := rec.last()
		if u.ClientStatus != structs.AllocClientStatusFailed {
			t.Fatalf("status %s", u.ClientStatus)
		}
		s := u.TaskStates["web"]
		if s == nil || s.State != structs.TaskStateDead || !s.Failed || len(s.Events) != 1 || s.Events[0].Type != structs.TaskSetupFailure ||
			s.Events[0].DisplayMessage != `failed to setup alloc: pre-run hook "network" failed: failed to configure networking for alloc: CNI plugin not found: "bridge"` {
			t.Fatalf("task state %+v %+v", s, s.Events)
		}
		// Setup removes what it made itself; nothing more is torn down.
		if id := ar.cfg.Alloc.ID; nets.got() != "teardown "+id+"; setup "+id {
			t.Fatalf("calls: %s", nets.got())
		}
	})
}

// A client that detaches leaves the namespace to its successor, which
// re-attaches to it (Status) instead of making another.
func TestBridgeDetachKeepsTheNamespace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		nets := &fakeNets{}
		data := t.TempDir()
		a := bridgeAlloc("1h")
		ar := newBridgeRunner(t, data, c, nets, a, rec)
		ar.Run()
		synctest.Wait()
		ar.Detach()
		<-ar.Done()
		if got := nets.got(); strings.Contains(got, "setup "+a.ID+"; teardown") {
			t.Fatalf("detach tore down: %s", got)
		}
		nets2 := &fakeNets{known: map[string]*network.Status{a.ID: {NetNSPath: "/var/run/netns/" + a.ID, InterfaceName: "eth0", Address: "172.26.64.3"}}}
		ar2 := newBridgeRunner(t, data, c, nets2, a, &recorder{})
		if got := nets2.got(); got != "status "+a.ID {
			t.Fatalf("restored runner's calls: %s", got)
		}
		ar2.Detach()
	})
}

// Every bridge group is networked through CNI, docker tasks or not, as
// Nomad's; a host group has no namespace.
func TestClientBridgeForEveryBridgeGroup(t *testing.T) {
	a := bridgeAlloc("1s")
	a.Job.TaskGroups[0].Tasks[0].Driver = structs.DriverDocker
	if !clientBridge(a.Job.TaskGroups[0]) {
		t.Fatal("docker group not networked through CNI")
	}
	a.Job.TaskGroups[0].Networks = nil
	a.Job.TaskGroups[0].Tasks[0].Driver = structs.DriverMock
	if clientBridge(a.Job.TaskGroups[0]) {
		t.Fatal("host group networked by the client")
	}
}

// pauseDriver is a mock driver that initiates the allocation's network,
// as docker's does with its pause container; its calls go to the same
// log as the network manager's.
type pauseDriver struct {
	drivers.Driver
	nets *fakeNets
	// existing: the first CreateNetwork finds a pause container that
	// runs already (created false).
	existing bool
	n        int
}

func (p *pauseDriver) CreateNetwork(_ context.Context, req *drivers.NetworkRequest) (*drivers.NetworkSandbox, bool, error) {
	p.nets.note("create " + req.AllocID + " on " + req.NodeID)
	p.n++
	sb := &drivers.NetworkSandbox{ContainerID: fmt.Sprintf("pause%d", p.n), NetNSPath: fmt.Sprintf("/run/docker/netns/%d", p.n)}
	if p.existing && p.n == 1 {
		sb.NetNSPath = "/run/docker/netns/old"
		return sb, false, nil
	}
	return sb, true, nil
}

func (p *pauseDriver) DestroyNetwork(_ context.Context, allocID, nodeID string) error {
	p.nets.note("destroy " + allocID + " on " + nodeID)
	return nil
}

// dockerBridgeRunner runs bridgeAlloc with a task "side" of the mock
// driver and its task "web" of the pause driver, as a docker task.
func dockerBridgeRunner(t *testing.T, data string, c clock.Clock, nets *fakeNets, pd *pauseDriver, a *structs.Allocation, rec *recorder) *AllocRunner {
	t.Helper()
	pd.Driver, pd.nets = mock.New(mock.Options{Clock: c}), nets
	ar, err := New(Config{
		Alloc: a, Node: &structs.Node{ID: "n1", Datacenter: "dc1"}, DataDir: data,
		Drivers: map[string]drivers.Driver{"mock": mock.New(mock.Options{Clock: c}), structs.DriverDocker: pd},
		Clock:   c, OnUpdate: rec.on, Networks: nets,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ar
}

func dockerBridgeAlloc() *structs.Allocation {
	a := bridgeAlloc("2s")
	tg := a.Job.TaskGroups[0]
	side := tg.Tasks[0].Copy()
	side.Name = "side"
	tg.Tasks[0].Driver = structs.DriverDocker
	tg.Tasks = append(tg.Tasks, side)
	return a
}

// In a bridge group with a docker task, the docker driver makes the
// namespace (its pause container) before any task, the client
// configures it through CNI, and every task gets its path, the docker
// tasks the pause container too; once the tasks have ended, the CNI
// network goes first, then the pause container.
func TestBridgeDriverMadeNamespace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		nets := &fakeNets{}
		a := dockerBridgeAlloc()
		ar := dockerBridgeRunner(t, t.TempDir(), c, nets, &pauseDriver{}, a, rec)
		id := a.ID
		if got, want := nets.got(), "create "+id+" on n1; teardown "+id+"; setupin "+id+" /run/docker/netns/1"; got != want {
			t.Fatalf("calls before Run: %s, want %s", got, want)
		}
		ar.Run()
		synctest.Wait()
		ar.mu.Lock()
		web, side := ar.handles["web"], ar.handles["side"]
		ar.mu.Unlock()
		if web == nil || side == nil {
			t.Fatalf("handles %v %v", web, side)
		}
		for _, h := range []*drivers.TaskHandle{web, side} {
			if h.Config.NetNSPath != "/run/docker/netns/1" || h.Config.NetworkContainerID != "pause1" || h.Config.Env["NOMAD_ALLOC_IP_http"] != "172.26.64.4" {
				t.Fatalf("%s's config: %+v", h.Config.TaskName, h.Config)
			}
		}
		if u := rec.last(); u.NetworkStatus == nil || u.NetworkStatus.Address != "172.26.64.4" {
			t.Fatalf("reported network %+v", u.NetworkStatus)
		}
		c.Advance(2 * time.Second)
		<-ar.Done()
		if got := nets.got(); !strings.HasSuffix(got, "; teardown "+id+"; destroy "+id+" on n1") {
			t.Fatalf("calls after the tasks ended: %s", got)
		}
	})
}

// A restarted client re-attaches to the pause container that still
// runs, with the namespace its record names: nothing is set up again.
// A pause container found without a record that matches is configured
// afresh, and replaced when that fails.
func TestBridgeDriverMadeNamespaceReattach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		a := dockerBridgeAlloc()
		id := a.ID
		nets := &fakeNets{known: map[string]*network.Status{id: {NetNSPath: "/run/docker/netns/old", InterfaceName: "eth0", Address: "172.26.64.4"}}}
		ar := dockerBridgeRunner(t, t.TempDir(), c, nets, &pauseDriver{existing: true}, a, &recorder{})
		if got, want := nets.got(), "create "+id+" on n1; status "+id; got != want {
			t.Fatalf("re-attach: %s, want %s", got, want)
		}
		if ar.sandbox == nil || ar.sandbox.ContainerID != "pause1" || ar.net.NetNSPath != "/run/docker/netns/old" {
			t.Fatalf("sandbox %+v net %+v", ar.sandbox, ar.net)
		}
		ar.Detach()

		nets = &fakeNets{setupInFails: 1}
		ar = dockerBridgeRunner(t, t.TempDir(), c, nets, &pauseDriver{existing: true}, a, &recorder{})
		want := "create " + id + " on n1; status " + id + "; teardown " + id + "; setupin " + id + " /run/docker/netns/old; destroy " + id + " on n1; " +
			"create " + id + " on n1; teardown " + id + "; setupin " + id + " /run/docker/netns/2"
		if got := nets.got(); got != want {
			t.Fatalf("replaced: %s\nwant %s", got, want)
		}
		if ar.sandbox == nil || ar.sandbox.ContainerID != "pause2" {
			t.Fatalf("sandbox %+v", ar.sandbox)
		}
		ar.Detach()
	})
}

// A namespace the driver made but CNI cannot configure fails the
// allocation and is removed.
func TestBridgeDriverMadeNamespaceSetupFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		a := dockerBridgeAlloc()
		id := a.ID
		nets := &fakeNets{setupInFails: 5}
		ar := dockerBridgeRunner(t, t.TempDir(), c, nets, &pauseDriver{}, a, rec)
		ar.Run()
		<-ar.Done()
		if u := rec.last(); u.ClientStatus != structs.AllocClientStatusFailed || u.TaskStates["web"].Events[0].Type != structs.TaskSetupFailure {
			t.Fatalf("update %+v", u)
		}
		if got, want := nets.got(), "create "+id+" on n1; teardown "+id+"; setupin "+id+" /run/docker/netns/1; destroy "+id+" on n1"; got != want {
			t.Fatalf("calls: %s, want %s", got, want)
		}
	})
}

// An allocation a client before the pause container ran on Docker's
// bridge (its docker tasks' handles in no namespace) is restored as it
// runs, without a namespace; one whose tasks are in a namespace, or that
// has no running task, gets its network as any other.
func TestDockerBridgeBefore(t *testing.T) {
	tg := dockerBridgeAlloc().Job.TaskGroups[0] // web: docker, side: mock
	handle := func(ns string) *persistedTask {
		return &persistedTask{State: &structs.TaskState{State: structs.TaskStateRunning},
			Handle: &drivers.TaskHandle{Config: &drivers.TaskConfig{NetNSPath: ns}}}
	}
	dead := &persistedTask{State: &structs.TaskState{State: structs.TaskStateDead}, Handle: &drivers.TaskHandle{Config: &drivers.TaskConfig{}}}
	for _, tc := range []struct {
		name  string
		tasks map[string]*persistedTask
		want  bool
	}{
		{"new allocation", nil, false},
		{"docker task on Docker's bridge", map[string]*persistedTask{"web": handle("")}, true},
		{"docker task in a namespace", map[string]*persistedTask{"web": handle("/run/docker/netns/1"), "side": handle("/run/docker/netns/1")}, false},
		{"another driver's task running", map[string]*persistedTask{"web": handle(""), "side": handle("")}, false},
		{"the other task dead", map[string]*persistedTask{"web": handle(""), "side": dead}, true},
	} {
		if got := dockerBridgeBefore(tg, &persisted{Tasks: tc.tasks}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A restored allocation whose tasks are all dead gets no namespace: no
// pause container is made for it again; what is left of its network (a
// client stopped before its teardown) is removed.
func TestBridgeNoNamespaceForADeadAllocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		a := dockerBridgeAlloc()
		data := t.TempDir()
		nets := &fakeNets{}
		ar := dockerBridgeRunner(t, data, c, nets, &pauseDriver{}, a, &recorder{})
		ar.Run()
		synctest.Wait()
		c.Advance(2 * time.Second)
		<-ar.Done()
		nets2 := &fakeNets{}
		ar2 := dockerBridgeRunner(t, data, c, nets2, &pauseDriver{}, a, &recorder{})
		ar2.Run()
		<-ar2.Done()
		if got, want := nets2.got(), "teardown "+a.ID+"; destroy "+a.ID+" on n1"; got != want {
			t.Fatalf("restored dead allocation's network calls: %s, want %s", got, want)
		}
	})
}
