package taskenv

import (
	"reflect"
	"testing"

	"github.com/droverhq/drover/structs"
)

func fixture() Input {
	task := &structs.Task{
		Name: "web", Driver: "raw_exec",
		Env: map[string]string{
			"LISTEN":    "${NOMAD_ADDR_http}",
			"ZONE":      "${meta.zone}-${attr.kernel.name}",
			"UNKNOWN":   "${nope.x} and ${NOMAD_NOPE}",
			"NOMAD_DC":  "override-attempt",
			"FROM_HOST": "${env.HOME}",
		},
		Resources: &structs.Resources{CPU: 100, MemoryMB: 300},
		Meta:      map[string]string{"owner": "task", "build-id": "7"},
	}
	job := &structs.Job{
		ID: "shop", Name: "Shop", Region: "eu", Namespace: "prod",
		Meta: map[string]string{"owner": "job", "team": "a"},
		TaskGroups: []*structs.TaskGroup{{
			Name: "front", Tasks: []*structs.Task{task}, Meta: map[string]string{"team": "b"},
		}},
	}
	alloc := &structs.Allocation{
		ID: "a-1", Name: "shop.front[2]", JobID: "shop", Job: job, TaskGroup: "front", Namespace: "prod",
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{"web": {
				Cpu: structs.AllocatedCpuResources{CpuShares: 500}, Memory: structs.AllocatedMemoryResources{MemoryMB: 256, MemoryMaxMB: 512},
			}},
			Shared: structs.AllocatedSharedResources{Ports: []structs.PortMapping{
				{Label: "http", Value: 23456, HostIP: "10.0.0.5"},
				{Label: "admin", Value: 24000, To: 9000},
			}},
		},
	}
	node := &structs.Node{
		ID: "node-uuid", Name: "n1", Datacenter: "dc7", NodeClass: "big", NodePool: "default",
		Attributes: map[string]string{"kernel.name": "linux", "unique.network.ip-address": "192.168.1.9"},
		Meta:       map[string]string{"zone": "z1"},
	}
	return Input{
		Alloc: alloc, Task: task, Node: node,
		AllocDir: "/data/alloc/a-1/alloc", TaskDir: "/data/alloc/a-1/web/local", SecretsDir: "/data/alloc/a-1/web/secrets",
		HostEnv: map[string]string{"HOME": "/root", "PATH": "/bin", "NOMAD_JOB_ID": "host-leak"},
	}
}

func TestBuild(t *testing.T) {
	env := Build(fixture())
	for _, tc := range []struct{ key, want string }{
		{"NOMAD_ALLOC_ID", "a-1"},
		{"NOMAD_ALLOC_INDEX", "2"},
		{"NOMAD_ALLOC_NAME", "shop.front[2]"},
		{"NOMAD_ALLOC_DIR", "/data/alloc/a-1/alloc"},
		{"NOMAD_TASK_DIR", "/data/alloc/a-1/web/local"},
		{"NOMAD_SECRETS_DIR", "/data/alloc/a-1/web/secrets"},
		{"NOMAD_JOB_ID", "shop"},
		{"NOMAD_JOB_NAME", "Shop"},
		{"NOMAD_GROUP_NAME", "front"},
		{"NOMAD_TASK_NAME", "web"},
		{"NOMAD_DC", "dc7"},
		{"NOMAD_REGION", "eu"},
		{"NOMAD_NAMESPACE", "prod"},
		{"NOMAD_CPU_LIMIT", "500"},
		{"NOMAD_MEMORY_LIMIT", "256"},
		{"NOMAD_MEMORY_MAX_LIMIT", "512"},
		{"NOMAD_META_owner", "task"},
		{"NOMAD_META_OWNER", "task"},
		{"NOMAD_META_team", "b"},
		{"NOMAD_META_BUILD_ID", "7"},
		{"NOMAD_PORT_http", "23456"},
		{"NOMAD_HOST_PORT_http", "23456"},
		{"NOMAD_IP_http", "10.0.0.5"},
		{"NOMAD_ADDR_http", "10.0.0.5:23456"},
		{"NOMAD_PORT_admin", "9000"},
		{"NOMAD_HOST_PORT_admin", "24000"},
		{"NOMAD_IP_admin", "192.168.1.9"},
		{"NOMAD_ADDR_admin", "192.168.1.9:24000"},
		{"DROVER_ALLOC_ID", "a-1"},
		{"DROVER_ADDR_http", "10.0.0.5:23456"},
		{"DROVER_META_team", "b"},
		{"LISTEN", "10.0.0.5:23456"},
		{"ZONE", "z1-linux"},
		{"UNKNOWN", "${nope.x} and ${NOMAD_NOPE}"},
		{"FROM_HOST", "/root"},
		{"HOME", "/root"},
	} {
		if got, ok := env.Get(tc.key); !ok || got != tc.want {
			t.Errorf("%s = %q (set %v), want %q", tc.key, got, ok, tc.want)
		}
	}
}

func TestNilInputs(t *testing.T) {
	env := Build(Input{Task: &structs.Task{Name: "x", Env: map[string]string{"A": "${node.class}"}}})
	if got, _ := env.Get("A"); got != "${node.class}" {
		t.Fatalf("A = %q", got)
	}
	if got, _ := env.Get("NOMAD_TASK_NAME"); got != "x" {
		t.Fatalf("task name = %q", got)
	}
	_ = Build(Input{}).List()
}

func TestReplace(t *testing.T) {
	env := Build(fixture())
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"${node.unique.id}/${node.unique.name}/${node.datacenter}/${node.class}", "node-uuid/n1/dc7/big"},
		{"${attr.kernel.name}", "linux"},
		{"${meta.zone}", "z1"},
		{"${env.HOME}", "/root"},
		{"${NOMAD_PORT_http}", "23456"},
		{"${DROVER_TASK_NAME}", "web"},
		{"${attr.missing}", "${attr.missing}"},
		{"$${x} ${", "$${x} ${"},
		{"a${NOMAD_TASK_NAME}b${NOMAD_TASK_NAME", "awebb${NOMAD_TASK_NAME"},
	} {
		if got := env.Replace(tc.in); got != tc.want {
			t.Errorf("Replace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReplaceConfigDeep(t *testing.T) {
	env := Build(fixture())
	in := map[string]any{
		"command": "${NOMAD_TASK_DIR}/run",
		"args":    []any{"--port", "${NOMAD_PORT_http}", 3},
		"nested":  map[string]any{"list": []string{"${meta.zone}"}, "n": float64(1)},
	}
	want := map[string]any{
		"command": "/data/alloc/a-1/web/local/run",
		"args":    []any{"--port", "23456", 3},
		"nested":  map[string]any{"list": []string{"z1"}, "n": float64(1)},
	}
	got := env.ReplaceConfig(in)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if in["command"] != "${NOMAD_TASK_DIR}/run" {
		t.Fatal("ReplaceConfig changed its input")
	}
}

// TestBuildWithoutHostEnvAsWithOne: without host variables the
// environment is built on the built-ins themselves; it holds what a build
// with a host variable nothing refers to holds, but that variable.
func TestBuildWithoutHostEnvAsWithOne(t *testing.T) {
	in := fixture()
	in.Task.Env["SELF"] = "${LISTEN}" // another env block variable: not resolved
	in.Task.Env["FROM_HOST"] = "${env.UNSET}"
	in.HostEnv = nil
	without := Build(in).Map()
	in.HostEnv = map[string]string{"ONLY_ON_HOST": "1"}
	with := Build(in).Map()
	delete(with, "ONLY_ON_HOST")
	if !reflect.DeepEqual(without, with) {
		t.Fatalf("without host variables\n%v\nwith one\n%v", without, with)
	}
	if without["NOMAD_DC"] == "override-attempt" || without["SELF"] != "${LISTEN}" {
		t.Fatalf("NOMAD_DC %q, SELF %q", without["NOMAD_DC"], without["SELF"])
	}
}
