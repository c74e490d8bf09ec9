package state

import (
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// address_mode = "alloc": a bridge allocation's services advertise its
// own address and the port's "to" once its client has reported its
// network, which the store keeps; before that, none registers.
func TestAllocAddressModeRegistersTheAllocAddress(t *testing.T) {
	s := newStore(t)
	node := statetest.Node("a")
	must(t, s.UpsertNode(1, node))
	job := statetest.Job("web", 1)
	for _, task := range job.TaskGroups[0].Tasks {
		for _, svc := range task.Services {
			svc.AddressMode = structs.AddressModeAlloc
			svc.PortLabel = "http"
		}
	}
	job = registerJob(t, s, 2, job)
	a := statetest.Alloc(job, node, "", "", 0)
	a.AllocatedResources.Shared.Ports = []structs.PortMapping{{Label: "http", Value: 31000, To: 8080, HostIP: "192.0.2.7"}}
	must(t, s.UpsertAllocs(3, []*structs.Allocation{a}, 0))
	setClientStatus(t, s, 4, a.ID, structs.AllocClientStatusRunning)
	if regs := get[[]*structs.ServiceRegistration](t)(s.Snapshot().ServiceRegistrations()); len(regs) != 0 {
		t.Fatalf("registered before the network was reported: %+v", regs)
	}
	must(t, s.UpdateAllocsFromClient(5, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{{
		ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
		NetworkStatus: &structs.AllocNetworkStatus{InterfaceName: "eth0", Address: "172.26.64.9"},
	}}}))
	regs := get[[]*structs.ServiceRegistration](t)(s.Snapshot().ServiceRegistrations())
	if len(regs) == 0 {
		t.Fatal("no registration once the network was reported")
	}
	for _, r := range regs {
		if r.Address != "172.26.64.9" || r.Port != 8080 {
			t.Errorf("registration %+v: want 172.26.64.9:8080", r)
		}
	}
	// A later report without it keeps it.
	setClientStatus(t, s, 6, a.ID, structs.AllocClientStatusRunning)
	got, err := s.Snapshot().AllocByID(a.ID)
	if err != nil || got.NetworkStatus == nil || got.NetworkStatus.Address != "172.26.64.9" {
		t.Fatalf("alloc network status %+v, %v", got.NetworkStatus, err)
	}
}
