package health

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// TestChecksUseTheHostPortOfAMappedPort: a docker task listens on its
// port's "to" inside the container; the host reaches it on the allocated
// host port, and that is where checks go.
func TestChecksUseTheHostPortOfAMappedPort(t *testing.T) {
	alloc := &structs.Allocation{AllocatedResources: &structs.AllocatedResources{
		Shared: structs.AllocatedSharedResources{Ports: []structs.PortMapping{{Label: "http", Value: 23456, To: 80, HostIP: "127.0.0.1"}}},
	}}
	tg := &structs.TaskGroup{
		Networks: []*structs.NetworkResource{{Mode: "bridge", DynamicPorts: []structs.Port{{Label: "http", To: 80}}}},
		Tasks:    []*structs.Task{{Name: "web", Driver: structs.DriverDocker}},
		Services: []*structs.Service{{Name: "web", PortLabel: "http", Checks: []*structs.ServiceCheck{
			{Name: "index", Type: "http", Path: "/"},
			{Name: "open", Type: "tcp"},
		}}},
	}
	checks, err := AllocChecks(alloc, tg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 2 || checks[0].Checker.(HTTPChecker).URL != "http://127.0.0.1:23456/" ||
		checks[1].Checker.(TCPChecker).Addr != "127.0.0.1:23456" {
		t.Fatalf("checks %+v", checks)
	}
}
