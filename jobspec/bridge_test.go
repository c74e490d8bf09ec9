package jobspec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// bridgeJob is a bridge group with one task per driver given.
func bridgeJob(drivers ...string) string {
	src := "job \"j\" {\n  group \"g\" {\n    network {\n      mode = \"bridge\"\n      port \"http\" {\n        to = 8080\n      }\n    }\n"
	for i, d := range drivers {
		cfg := map[string]string{
			"raw_exec": "command = \"/bin/true\"", "exec": "command = \"/bin/true\"", "docker": "image = \"web:1\"",
			"java": "jar_path = \"local/app.jar\"", "mock": "run_for = \"1s\"",
		}[d]
		src += fmt.Sprintf("    task \"t%d\" {\n      driver = %q\n      config {\n        %s\n      }\n    }\n", i, d, cfg)
	}
	return src + "  }\n}\n"
}

// Every driver drover ships joins a bridge group's namespace, as
// Nomad's capabilities of the same drivers say, docker included and in
// any mix (docker's tasks join the namespace of the allocation's pause
// container, the others its path).
func TestBridgeGroupDrivers(t *testing.T) {
	for _, ds := range [][]string{
		{"exec"}, {"raw_exec"}, {"mock"}, {"java"}, {"docker"},
		{"exec", "raw_exec", "mock"}, {"exec", "docker"}, {"docker", "mock", "exec"}, {"docker", "raw_exec", "java"},
	} {
		job, _, err := Parse("b.hcl", []byte(bridgeJob(ds...)), Options{})
		if err != nil {
			t.Errorf("%v: %v", ds, err)
			continue
		}
		if tg := job.TaskGroups[0]; tg.NetworkMode() != "bridge" {
			t.Errorf("%v: mode %s", ds, tg.NetworkMode())
		}
	}
}

// Docker tasks of a bridge group that join its namespace publish no
// port of their own (the client maps the group's), so two of them may
// list the same label, as Nomad ignores the list there; a task on
// Docker's bridge (network_mode = "bridge") publishes its list.
func TestBridgeDockerTasksPublishNothing(t *testing.T) {
	src := bridgeJob("docker", "docker")
	src = strings.ReplaceAll(src, `image = "web:1"`, "image = \"web:1\"\n        ports = [\"http\"]")
	if _, _, err := Parse("b.hcl", []byte(src), Options{}); err != nil {
		t.Fatalf("two joined docker tasks listing one port: %v", err)
	}
	both := strings.ReplaceAll(src, `ports = ["http"]`, "ports = [\"http\"]\n        network_mode = \"bridge\"")
	checkRule(t, "b.hcl", rule{
		name: "on docker's bridge", src: both, field: "task.config.ports", line: 21,
		msg: `publishes port "http", which task "t0" publishes too`,
	})
}

func TestDriverNetIsolationModes(t *testing.T) {
	for _, d := range []string{structs.DriverRawExec, structs.DriverExec, structs.DriverJava, structs.DriverDocker, structs.DriverMock} {
		if m := structs.DriverNetIsolationModes(d); len(m) != 2 || m[1] != structs.NetIsolationGroup {
			t.Errorf("%s: %v", d, m)
		}
	}
	if structs.DriverNetIsolationModes("qemu") != nil {
		t.Error("qemu has modes")
	}
}

// address_mode = "alloc" is for a group in bridge mode, whatever its
// drivers: elsewhere there is no address of the allocation's own.
func TestAllocAddressModeNeedsTheClientBridge(t *testing.T) {
	withService := func(src string) string {
		return strings.Replace(src, "    task \"t0\" {", "    service {\n      name         = \"web\"\n      port         = \"http\"\n      provider     = \"nomad\"\n      address_mode = \"alloc\"\n    }\n    task \"t0\" {", 1)
	}
	for _, ds := range [][]string{{"exec"}, {"docker"}, {"docker", "raw_exec"}} {
		job, _, err := Parse("b.hcl", []byte(withService(bridgeJob(ds...))), Options{})
		if err != nil || job.TaskGroups[0].Services[0].AddressMode != structs.AddressModeAlloc {
			t.Fatalf("%v bridge group: %v", ds, err)
		}
	}
	checkRule(t, "b.hcl", rule{
		name: "host", src: strings.Replace(withService(bridgeJob("docker")), `mode = "bridge"`, `mode = "host"`, 1), field: "service.address_mode", line: 13,
		msg: `"alloc" needs an address of the allocation's own, which a group has in "bridge" mode (the group's network mode is host)`,
	})
}
