package scheduler

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func baseJob() *structs.Job {
	return &structs.Job{
		ID: "example", Type: structs.JobTypeService, Version: 0, CreateIndex: 1,
		Datacenters: []string{"dc1"}, Priority: 50, Meta: map[string]string{"a": "1"},
		TaskGroups: []*structs.TaskGroup{{
			Name: "web", Count: 2, Update: structs.DefaultUpdateStrategy(),
			RestartPolicy:    structs.DefaultRestartPolicy(structs.JobTypeService),
			ReschedulePolicy: structs.DefaultReschedulePolicy(structs.JobTypeService),
			EphemeralDisk:    &structs.EphemeralDisk{SizeMB: 300},
			Meta:             map[string]string{"g": "1"},
			Tasks: []*structs.Task{{
				Name: "main", Driver: structs.DriverMock, Config: map[string]any{"command": "/bin/sleep", "args": []any{"10"}},
				Env: map[string]string{"A": "1"}, Resources: &structs.Resources{CPU: 100, MemoryMB: 300},
				Meta: map[string]string{"t": "1"}, KillTimeout: 5 * time.Second,
			}},
		}},
	}
}

func TestUpdateKindFor(t *testing.T) {
	cases := []struct {
		name   string
		change func(j *structs.Job)
		want   UpdateKind
	}{
		{"same version", func(j *structs.Job) {}, UpdateNone},
		{"new version, nothing else", func(j *structs.Job) { j.Version++ }, UpdateInPlace},
		{"job meta", func(j *structs.Job) { j.Meta["a"] = "2" }, UpdateInPlace},
		{"group meta", func(j *structs.Job) { j.TaskGroups[0].Meta["g"] = "2" }, UpdateInPlace},
		{"task meta", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Meta["t"] = "2" }, UpdateInPlace},
		{"count", func(j *structs.Job) { j.TaskGroups[0].Count = 5 }, UpdateInPlace},
		{"priority", func(j *structs.Job) { j.Priority = 70 }, UpdateInPlace},
		{"update strategy", func(j *structs.Job) { j.TaskGroups[0].Update.MaxParallel = 3 }, UpdateInPlace},
		{"restart policy", func(j *structs.Job) { j.TaskGroups[0].RestartPolicy.Attempts = 9 }, UpdateInPlace},
		{"reschedule policy", func(j *structs.Job) { j.TaskGroups[0].ReschedulePolicy.Delay = time.Minute }, UpdateInPlace},
		{"kill timeout", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].KillTimeout = time.Minute }, UpdateInPlace},
		{"driver", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Driver = structs.DriverRawExec }, UpdateDestructive},
		{"config", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Config["args"] = []any{"20"} }, UpdateDestructive},
		{"env", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env["A"] = "2" }, UpdateDestructive},
		{"resources", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 512 }, UpdateDestructive},
		{"user", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].User = "nobody" }, UpdateDestructive},
		{"lifecycle", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}
		}, UpdateDestructive},
		{"service", func(j *structs.Job) {
			j.TaskGroups[0].Services = []*structs.Service{{Name: "web", PortLabel: "http"}}
		}, UpdateDestructive},
		{"check", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Services = []*structs.Service{{Name: "web", Checks: []*structs.ServiceCheck{{Type: "tcp"}}}}
		}, UpdateDestructive},
		{"network", func(j *structs.Job) {
			j.TaskGroups[0].Networks = []*structs.NetworkResource{{DynamicPorts: []structs.Port{{Label: "http"}}}}
		}, UpdateDestructive},
		{"ephemeral disk", func(j *structs.Job) { j.TaskGroups[0].EphemeralDisk.SizeMB = 500 }, UpdateDestructive},
		{"group constraint", func(j *structs.Job) {
			j.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}}
		}, UpdateDestructive},
		{"job constraint", func(j *structs.Job) {
			j.Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts, RTarget: "true"}}
		}, UpdateDestructive},
		{"datacenters", func(j *structs.Job) { j.Datacenters = []string{"dc2"} }, UpdateDestructive},
		{"task added", func(j *structs.Job) {
			j.TaskGroups[0].Tasks = append(j.TaskGroups[0].Tasks, &structs.Task{Name: "side", Driver: structs.DriverMock})
		}, UpdateDestructive},
		{"config number int vs float", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Config["n"] = 1
		}, UpdateDestructive},
		{"artifact", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Artifacts = []*structs.TaskArtifact{{GetterSource: "http://127.0.0.1/app.tar.gz", GetterMode: "any", RelativeDest: "local/"}}
		}, UpdateDestructive},
		{"env removed", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = nil }, UpdateDestructive},
		{"template", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Templates = []*structs.Template{{DestPath: "local/a", EmbeddedTmpl: "x"}}
		}, UpdateDestructive},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := baseJob()
			nj := baseJob()
			c.change(nj)
			if c.name != "same version" && nj.Version == old.Version {
				nj.Version++
			}
			if got := UpdateKindFor(old, nj, "web"); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
	t.Run("nil old job", func(t *testing.T) {
		if got := UpdateKindFor(nil, baseJob(), "web"); got != UpdateDestructive {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("empty and nil compare equal", func(t *testing.T) {
		old, nj := baseJob(), baseJob()
		old.TaskGroups[0].Tasks[0].Env = map[string]string{}
		nj.TaskGroups[0].Tasks[0].Env = nil
		nj.Version++
		if got := UpdateKindFor(old, nj, "web"); got != UpdateInPlace {
			t.Fatalf("got %s", got)
		}
	})
	t.Run("int and float config numbers compare equal", func(t *testing.T) {
		old, nj := baseJob(), baseJob()
		old.TaskGroups[0].Tasks[0].Config["n"] = 1
		nj.TaskGroups[0].Tasks[0].Config["n"] = float64(1)
		nj.Version++
		if got := UpdateKindFor(old, nj, "web"); got != UpdateInPlace {
			t.Fatalf("got %s", got)
		}
	})
}
