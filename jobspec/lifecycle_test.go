package jobspec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/droverhq/drover/jobdiff"
	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/nomad/api"
)

// lifecycleJob is a group with a task of each lifecycle kind, written as
// Nomad's documentation writes them.
const lifecycleJob = `job "web" {
  group "g" {
    task "init" {
      driver = "mock"
      lifecycle {
        hook    = "prestart"
        sidecar = false
      }
    }
    task "proxy" {
      driver = "mock"
      lifecycle {
        hook    = "prestart"
        sidecar = true
      }
    }
    task "main" {
      driver = "mock"
      leader = true
    }
    task "announce" {
      driver = "mock"
      lifecycle { hook = "poststart" }
    }
    task "cleanup" {
      driver = "mock"
      lifecycle { hook = "poststop" }
    }
  }
}`

func TestLifecycleParse(t *testing.T) {
	job, _, err := Parse("l.hcl", []byte(lifecycleJob), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"init":     `{"Hook":"prestart","Sidecar":false}`,
		"proxy":    `{"Hook":"prestart","Sidecar":true}`,
		"main":     `null`,
		"announce": `{"Hook":"poststart","Sidecar":false}`,
		"cleanup":  `{"Hook":"poststop","Sidecar":false}`,
	}
	for _, task := range job.TaskGroups[0].Tasks {
		b, _ := json.Marshal(task.Lifecycle)
		if string(b) != want[task.Name] {
			t.Errorf("%s: Lifecycle %s, want %s", task.Name, b, want[task.Name])
		}
	}
	if tk := job.TaskGroups[0].LookupTask("proxy"); !tk.IsSidecar() || tk.IsEphemeral() || tk.IsMain() {
		t.Errorf("proxy: sidecar %v ephemeral %v main %v", tk.IsSidecar(), tk.IsEphemeral(), tk.IsMain())
	}
	// The API JSON drover answers with parses back to the same job.
	whole, _ := json.Marshal(job)
	back, _, err := ParseAPIJob(whole)
	if err != nil {
		t.Fatalf("round trip: %v", err)
	}
	if a, b := render(job, nil, nil), render(back, nil, nil); string(a) != string(b) {
		t.Errorf("round trip differs:\n%s\n%s", a, b)
	}
}

func TestLifecycleFromNomadClient(t *testing.T) {
	nj := api.NewServiceJob("web", "web", "global", 50)
	tg := api.NewTaskGroup("g", 1)
	pre := api.NewTask("init", "mock")
	pre.Lifecycle = &api.TaskLifecycle{Hook: "prestart", Sidecar: true}
	tg.AddTask(pre)
	tg.AddTask(api.NewTask("main", "mock"))
	nj.AddTaskGroup(tg)
	data, _ := json.Marshal(map[string]any{"Job": nj})
	got, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	if l := got.TaskGroups[0].Tasks[0].Lifecycle; l == nil || *l != (structs.TaskLifecycle{Hook: "prestart", Sidecar: true}) {
		t.Fatalf("got %+v", l)
	}
	if got.TaskGroups[0].Tasks[1].Lifecycle != nil {
		t.Fatal("a main task got a lifecycle")
	}
}

func TestLifecycleErrors(t *testing.T) {
	task := func(body string) string {
		return "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n" + body + "\n    }\n  }\n}\n"
	}
	for _, c := range []rule{
		{"unknown hook", task("      lifecycle {\n        hook = \"prestop\"\n      }"), "lifecycle.hook", 6, `must be "prestart", "poststart" or "poststop" (got "prestop")`, false},
		{"no hook", task("      lifecycle { sidecar = true }"), "lifecycle.hook", 5, `must be "prestart", "poststart" or "poststop" (got "")`, false},
		{"sidecar not a bool", task("      lifecycle {\n        hook    = \"prestart\"\n        sidecar = \"maybe\"\n      }"), "lifecycle.sidecar", 7, "", false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
	_, _, err := ParseAPIJob([]byte(`{"ID":"j","TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"mock","Lifecycle":{"Hook":"later"}}]}]}`))
	if err == nil || !strings.Contains(err.Error(), "Job.TaskGroups[0].Tasks[0].Lifecycle.Hook") {
		t.Fatalf("API JSON with a bad hook: %v", err)
	}
}

// TestLifecycleDiff: a changed lifecycle block shows in the plan's diff.
func TestLifecycleDiff(t *testing.T) {
	old, _, err := Parse("l.hcl", []byte(lifecycleJob), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cur, _, err := Parse("l.hcl", []byte(strings.Replace(lifecycleJob, `hook = "poststart"`, `hook = "poststop"`, 1)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := jobdiff.Jobs(old, cur, false)
	out := jobdiff.Format(d, false)
	// As Nomad's plan: a changed lifecycle replaces the allocation.
	if !strings.Contains(out, "Lifecycle") || !strings.Contains(out, `"poststart" => "poststop"`) ||
		!strings.Contains(out, `Task: "announce" (forces create/destroy update)`) {
		t.Fatalf("diff does not show the lifecycle change:\n%s", out)
	}
}
