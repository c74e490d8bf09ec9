package allocrunner

import (
	"context"
	"errors"
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

// A group of docker tasks only keeps Docker's bridge; a host group
// has no namespace.
func TestNoClientBridgeForDockerOrHostGroups(t *testing.T) {
	a := bridgeAlloc("1s")
	a.Job.TaskGroups[0].Tasks[0].Driver = structs.DriverDocker
	if clientBridge(a.Job.TaskGroups[0]) {
		t.Fatal("docker-only group networked by the client")
	}
	a.Job.TaskGroups[0].Networks = nil
	a.Job.TaskGroups[0].Tasks[0].Driver = structs.DriverMock
	if clientBridge(a.Job.TaskGroups[0]) {
		t.Fatal("host group networked by the client")
	}
}
