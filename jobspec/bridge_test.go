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
// Nomad's capabilities of the same drivers say; only docker is kept with
// its own kind.
func TestBridgeGroupDrivers(t *testing.T) {
	for _, ds := range [][]string{
		{"exec"}, {"raw_exec"}, {"mock"}, {"java"}, {"docker"},
		{"exec", "raw_exec", "mock"},
	} {
		job, _, err := Parse("b.hcl", []byte(bridgeJob(ds...)), Options{})
		if err != nil {
			t.Errorf("%v: %v", ds, err)
			continue
		}
		tg := job.TaskGroups[0]
		if tg.NetworkMode() != "bridge" || tg.BridgeByDocker() != (ds[0] == "docker") {
			t.Errorf("%v: mode %s, by docker %v", ds, tg.NetworkMode(), tg.BridgeByDocker())
		}
	}
}

func TestBridgeRefusesDockerMixedWithOthers(t *testing.T) {
	checkRule(t, "b.hcl", rule{
		name: "mixed", src: bridgeJob("exec", "docker"), field: "network.mode", line: 4,
		msg: `"bridge" with docker task "t1" needs docker for every task of the group (task "t0" uses exec)`,
	})
	checkRule(t, "b.hcl", rule{
		name: "mixed", src: bridgeJob("docker", "mock", "exec"), field: "network.mode", line: 4,
		msg: `"bridge" with docker task "t0" needs docker for every task of the group (task "t1" uses mock)`,
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

// address_mode = "alloc" is for a group the client networks in bridge
// mode: elsewhere there is no address of the allocation's own.
func TestAllocAddressModeNeedsTheClientBridge(t *testing.T) {
	withService := func(src string) string {
		return strings.Replace(src, "    task \"t0\" {", "    service {\n      name         = \"web\"\n      port         = \"http\"\n      provider     = \"nomad\"\n      address_mode = \"alloc\"\n    }\n    task \"t0\" {", 1)
	}
	job, _, err := Parse("b.hcl", []byte(withService(bridgeJob("exec"))), Options{})
	if err != nil || job.TaskGroups[0].Services[0].AddressMode != structs.AddressModeAlloc {
		t.Fatalf("exec bridge group: %v", err)
	}
	checkRule(t, "b.hcl", rule{
		name: "docker", src: withService(bridgeJob("docker")), field: "service.address_mode", line: 13,
		msg: `"alloc" needs an address of the allocation's own, which a group has in "bridge" mode with no docker task (a group of docker tasks uses Docker's bridge)`,
	})
}
