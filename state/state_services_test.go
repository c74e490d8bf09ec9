package state

import (
	"context"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// runningServiceAlloc stores a node, the fixture job (its two tasks each
// register a nomad service on port "http") and one alloc with port http
// 31000, and returns the alloc, still pending.
func runningServiceAlloc(t *testing.T, s *Store) *structs.Allocation {
	t.Helper()
	node := statetest.Node("a")
	must(t, s.UpsertNode(1, node))
	job := registerJob(t, s, 2, statetest.Job("web", 1))
	a := statetest.Alloc(job, node, "", "", 0)
	a.AllocatedResources.Shared.Ports = []structs.PortMapping{{Label: "http", Value: 31000, HostIP: "192.0.2.7"}}
	must(t, s.UpsertAllocs(3, []*structs.Allocation{a}, 0))
	return a
}

func setClientStatus(t *testing.T, s *Store, index uint64, id, status string) {
	t.Helper()
	must(t, s.UpdateAllocsFromClient(index, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: id, ClientStatus: status}},
	}))
}

func TestServiceRegistrationReads(t *testing.T) {
	s := newStore(t)
	a := runningServiceAlloc(t, s)
	setClientStatus(t, s, 4, a.ID, structs.AllocClientStatusRunning)
	snap := s.Snapshot()
	all := get[[]*structs.ServiceRegistration](t)(snap.ServiceRegistrations())
	if len(all) != 2 {
		t.Fatalf("%d registrations, want 2", len(all))
	}
	for _, r := range all {
		if r.Address != "192.0.2.7" || r.Port != 31000 || r.NodeID != a.NodeID || r.Datacenter != "dc1" {
			t.Errorf("registration %+v: want the port's host IP 192.0.2.7:31000 on node %s in dc1", r, a.NodeID)
		}
	}
	if got := get[[]*structs.ServiceRegistration](t)(snap.ServiceRegistrationsByName("default", "server-svc")); len(got) != 1 || got[0].ServiceName != "server-svc" {
		t.Fatalf("by name = %+v", got)
	}
	if got := get[[]*structs.ServiceRegistration](t)(snap.ServiceRegistrationsByName("other", "server-svc")); len(got) != 0 {
		t.Fatalf("by name in another namespace = %+v", got)
	}
	// A namespace is matched whole: "def" is not a prefix match of "default".
	if got := get[[]*structs.ServiceRegistration](t)(snap.ServiceRegistrationsByNamespace("def")); len(got) != 0 {
		t.Fatalf("namespace def = %+v", got)
	}
	ns := get[[]*structs.ServiceRegistration](t)(snap.ServiceRegistrationsByNamespace("default"))
	if len(ns) != 2 || ns[0].ServiceName != "server-svc" || ns[1].ServiceName != "sidecar-svc" {
		t.Fatalf("by namespace = %+v", ns)
	}
	if got := get[[]*structs.ServiceRegistration](t)(snap.ServiceRegistrationsByNode(a.NodeID)); len(got) != 2 {
		t.Fatalf("by node = %d", len(got))
	}
	if got := get[[]*structs.ServiceRegistration](t)(snap.ServiceRegistrationsByAlloc(a.ID)); len(got) != 2 {
		t.Fatalf("by alloc = %d", len(got))
	}

	// Restored table by table: the same registrations, indexes included.
	r := restoredCopy(t, s)
	back := get[[]*structs.ServiceRegistration](t)(r.Snapshot().ServiceRegistrationsByAlloc(a.ID))
	if len(back) != 2 || back[0].CreateIndex != 4 || !back[0].SameContent(all[0]) {
		t.Fatalf("restored = %+v", back)
	}

	must(t, s.DeleteServiceRegistration(5, &structs.ServiceRegistrationDeleteRequest{
		Namespace: "default", ServiceName: "server-svc", ID: all[0].ID,
	}))
	if got := get[*structs.ServiceRegistration](t)(s.Snapshot().ServiceRegistrationByID(all[0].ID)); got != nil {
		t.Fatalf("deleted registration = %+v", got)
	}
	err := s.DeleteServiceRegistration(6, &structs.ServiceRegistrationDeleteRequest{
		Namespace: "default", ServiceName: "server-svc", ID: all[0].ID,
	})
	if err == nil {
		t.Fatal("deleting an unknown registration succeeded")
	}
}

// A blocking query on a service's registrations wakes when the service
// gets an instance, and again when it loses it.
func TestServiceRegistrationBlockingQuery(t *testing.T) {
	s := newStore(t)
	a := runningServiceAlloc(t, s)
	query := func(_ memdb.WatchSet, snap *Snapshot) (any, uint64, error) {
		regs, err := snap.ServiceRegistrationsByName("default", "server-svc")
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.Index(TableServices)
		return regs, max(idx, 1), err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type answer struct {
		regs []*structs.ServiceRegistration
		idx  uint64
	}
	wait := func(min uint64) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			res, idx, err := s.BlockingQuery(ctx, min, 10*time.Second, query)
			if err != nil {
				t.Error(err)
			}
			regs, _ := res.([]*structs.ServiceRegistration)
			ch <- answer{regs, idx}
		}()
		return ch
	}
	_, idx0, _ := s.BlockingQuery(ctx, 0, 0, query)
	ch := wait(idx0)
	select {
	case got := <-ch:
		t.Fatalf("the query answered before any change: %+v", got)
	case <-time.After(50 * time.Millisecond):
	}
	setClientStatus(t, s, 4, a.ID, structs.AllocClientStatusRunning)
	got := <-ch
	if len(got.regs) != 1 || got.idx != 4 {
		t.Fatalf("after running: %d registrations at %d, want 1 at 4", len(got.regs), got.idx)
	}
	ch = wait(got.idx)
	setClientStatus(t, s, 5, a.ID, structs.AllocClientStatusComplete)
	if got := <-ch; len(got.regs) != 0 || got.idx != 5 {
		t.Fatalf("after complete: %d registrations at %d, want 0 at 5", len(got.regs), got.idx)
	}
}

// Names, tags and addresses are filled in with the task's runtime
// variables; a port number as the port label is the port.
func TestAllocServiceRegistrationsInterpolate(t *testing.T) {
	node := statetest.Node("a")
	job := statetest.Job("web", 1)
	svc := job.TaskGroups[0].Tasks[0].Services[0]
	svc.Name = "${NOMAD_JOB_NAME}-${NOMAD_TASK_NAME}-${NOMAD_ALLOC_INDEX}"
	svc.Tags = []string{"dc=${node.datacenter}", "zone=${meta.zone}"}
	svc.PortLabel = "8080"
	job.TaskGroups[0].Tasks[1].Services = nil
	a := statetest.Alloc(job, node, "", "", 3)
	a.ClientStatus = structs.AllocClientStatusRunning
	regs := AllocServiceRegistrations(a, node, false)
	if len(regs) != 1 {
		t.Fatalf("%d registrations", len(regs))
	}
	r := regs[0]
	if r.ServiceName != "web-server-3" || r.Port != 8080 || r.Address != "127.0.0.1" ||
		r.ID != "_nomad-task-"+a.ID+"-server-web-server-3-8080" {
		t.Fatalf("registration = %+v", r)
	}
	if len(r.Tags) != 2 || r.Tags[0] != "dc=dc1" || r.Tags[1] != "zone=a" {
		t.Fatalf("tags = %v", r.Tags)
	}
	svc.Address = "${attr.unique.network.ip-address}"
	node.Attributes["unique.network.ip-address"] = "198.51.100.4"
	if r := AllocServiceRegistrations(a, node, false)[0]; r.Address != "198.51.100.4" {
		t.Fatalf("address = %q", r.Address)
	}
}

// A snapshot written before registrations were kept restores with the
// running allocations' registrations derived.
func TestRestoreDerivesMissingServices(t *testing.T) {
	s := newStore(t)
	a := runningServiceAlloc(t, s)
	setClientStatus(t, s, 4, a.ID, structs.AllocClientStatusRunning)
	dst := newStore(t)
	r := dst.Restorer()
	snap := s.Snapshot()
	for _, table := range Tables {
		if table == TableServices {
			continue // as an older snapshot has it
		}
		must(t, snap.Each(table, func(obj any) error {
			if e, ok := obj.(*IndexEntry); ok && e.Key == TableServices {
				return nil
			}
			return r.Insert(table, obj)
		}))
	}
	r.Commit()
	regs := get[[]*structs.ServiceRegistration](t)(dst.Snapshot().ServiceRegistrationsByAlloc(a.ID))
	want := get[[]*structs.ServiceRegistration](t)(s.Snapshot().ServiceRegistrationsByAlloc(a.ID))
	if len(regs) != 2 || !regs[0].SameContent(want[0]) || !regs[1].SameContent(want[1]) || regs[0].CreateIndex != 4 {
		t.Fatalf("derived after restore = %+v, want %+v", regs, want)
	}
	if idx := get[uint64](t)(dst.Snapshot().Index(TableServices)); idx != 4 {
		t.Fatalf("services index after restore = %d, want 4", idx)
	}
}
