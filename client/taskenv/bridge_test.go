package taskenv

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// A bridge allocation's ports, as Nomad sets them: the task's side (to)
// in NOMAD_PORT_ and NOMAD_ALLOC_PORT_, the host's in NOMAD_HOST_*, the
// namespace's address in NOMAD_ALLOC_IP_/ADDR_/INTERFACE_.
func TestBridgePortVariables(t *testing.T) {
	job := &structs.Job{ID: "web", Name: "web", TaskGroups: []*structs.TaskGroup{{Name: "g"}}}
	a := &structs.Allocation{ID: "a1", Name: "web.g[0]", JobID: "web", TaskGroup: "g", Job: job,
		AllocatedResources: &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{Ports: []structs.PortMapping{
			{Label: "http", Value: 23456, To: 8080, HostIP: "10.0.0.5"},
			{Label: "raw", Value: 24000, HostIP: "10.0.0.5"},
		}}}}
	in := Input{Alloc: a, Task: &structs.Task{Name: "t"}, AllocNetwork: &AllocNetwork{InterfaceName: "eth0", Address: "172.26.64.7"}}
	e := Build(in)
	for k, want := range map[string]string{
		"NOMAD_PORT_http": "8080", "NOMAD_ALLOC_PORT_http": "8080", "NOMAD_HOST_PORT_http": "23456",
		"NOMAD_IP_http": "10.0.0.5", "NOMAD_HOST_IP_http": "10.0.0.5",
		"NOMAD_ADDR_http": "10.0.0.5:23456", "NOMAD_HOST_ADDR_http": "10.0.0.5:23456",
		"NOMAD_ALLOC_IP_http": "172.26.64.7", "NOMAD_ALLOC_ADDR_http": "172.26.64.7:8080", "NOMAD_ALLOC_INTERFACE_http": "eth0",
		"NOMAD_ALLOC_PORT_raw": "24000", "NOMAD_ALLOC_ADDR_raw": "172.26.64.7:24000",
	} {
		if got, _ := e.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	in.AllocNetwork = nil
	if v, ok := Build(in).Get("NOMAD_ALLOC_IP_http"); ok {
		t.Errorf("host mode sets NOMAD_ALLOC_IP_http=%q", v)
	}
}
