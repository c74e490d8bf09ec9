package jobspec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/nomad/api"
)

// checksJob has a service-level check_restart merged into three checks:
// one that writes nothing of its own, one that overrides limit and adds
// ignore_warnings, and a script check run inside its task.
const checksJob = `job "web" {
  group "app" {
    network {
      port "http" {}
    }
    task "srv" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
      service {
        name = "web"
        port = "http"
        check_restart {
          limit = 3
          grace = "10s"
        }
        check {
          name     = "alive"
          type     = "tcp"
          interval = "5s"
          timeout  = "1s"
        }
        check {
          name     = "ready"
          type     = "http"
          path     = "/ready"
          interval = "5s"
          timeout  = "1s"
          check_restart {
            limit           = 2
            ignore_warnings = true
          }
        }
        check {
          name     = "script"
          type     = "script"
          command  = "/bin/sh"
          args     = ["-c", "test -f ready"]
          interval = "10s"
          timeout  = "2s"
        }
      }
    }
  }
}
`

func TestCheckRestartMerge(t *testing.T) {
	job, warns, err := Parse("c.hcl", []byte(checksJob), Options{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	checks := job.TaskGroups[0].Tasks[0].Services[0].Checks
	want := []*structs.CheckRestart{
		{Limit: 3, Grace: 10 * time.Second},
		{Limit: 2, Grace: 10 * time.Second, IgnoreWarnings: true},
		{Limit: 3, Grace: 10 * time.Second},
	}
	for i, c := range checks {
		if !reflect.DeepEqual(c.CheckRestart, want[i]) {
			t.Errorf("check %s: check_restart %+v, want %+v", c.Name, c.CheckRestart, want[i])
		}
	}
	s := checks[2]
	if s.Type != structs.CheckTypeScript || s.Command != "/bin/sh" || !reflect.DeepEqual(s.Args, []string{"-c", "test -f ready"}) {
		t.Errorf("script check %+v", s)
	}

	// A check_restart on the check alone gets Nomad's default grace.
	src := strings.Replace(checksJob, "        check_restart {\n          limit = 3\n          grace = \"10s\"\n        }\n", "", 1)
	job, _, err = Parse("c.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checks = job.TaskGroups[0].Tasks[0].Services[0].Checks
	if checks[0].CheckRestart != nil || !reflect.DeepEqual(checks[1].CheckRestart, &structs.CheckRestart{Limit: 2, Grace: time.Second, IgnoreWarnings: true}) {
		t.Errorf("without the service's block: %+v %+v", checks[0].CheckRestart, checks[1].CheckRestart)
	}

	// The parsed job round-trips through the API form.
	data, _ := json.Marshal(job)
	back, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.TaskGroups[0].Tasks[0].Services, job.TaskGroups[0].Tasks[0].Services) {
		t.Errorf("round trip changed the services")
	}
}

// TestCheckRestartFromNomadClient: what Nomad's Go client sends (its
// field names; the service's CheckRestart beside the checks') decodes and
// merges as in a job file.
func TestCheckRestartFromNomadClient(t *testing.T) {
	job := nomadClientJob()
	grace := 30 * time.Second
	svc := job.TaskGroups[0].Services[0]
	svc.CheckRestart = &api.CheckRestart{Limit: 4, Grace: &grace}
	svc.Checks = append(svc.Checks, api.ServiceCheck{
		Name: "script", Type: "script", Command: "/bin/true", Args: []string{"x"}, TaskName: "srv",
		Interval: time.Second, Timeout: time.Second, CheckRestart: &api.CheckRestart{IgnoreWarnings: true},
	})
	data, err := json.Marshal(map[string]any{"Job": job})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	checks := got.TaskGroups[0].Services[0].Checks
	if !reflect.DeepEqual(checks[0].CheckRestart, &structs.CheckRestart{Limit: 4, Grace: grace}) ||
		!reflect.DeepEqual(checks[1].CheckRestart, &structs.CheckRestart{Limit: 4, Grace: grace, IgnoreWarnings: true}) {
		t.Errorf("merged %+v %+v", checks[0].CheckRestart, checks[1].CheckRestart)
	}
	if checks[1].Command != "/bin/true" || checks[1].TaskName != "srv" || len(checks[1].Args) != 1 {
		t.Errorf("script check %+v", checks[1])
	}
}

func TestCheckRestartAPIErrors(t *testing.T) {
	const head = `{"ID":"x","TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock","Services":[{"Name":"s",`
	cases := map[string]string{
		head + `"CheckRestart":{"Limit":-2}}]}]}]}`:                                                    "Job.TaskGroups[0].Tasks[0].Services[0].CheckRestart.Limit: must not be negative (got -2)",
		head + `"CheckRestart":{"Grace":"1s"}}]}]}]}`:                                                  "Job.TaskGroups[0].Tasks[0].Services[0].CheckRestart.Grace: must be a number (got a string)",
		head + `"CheckRestart":{"Limt":1}}]}]}]}`:                                                      "Job.TaskGroups[0].Tasks[0].Services[0].CheckRestart.Limt: not a field of a Nomad check_restart (did you mean Limit?)",
		head + `"Checks":[{"Type":"script","Interval":1,"Timeout":1}]}]}]}]}`:                          "Job.TaskGroups[0].Tasks[0].Services[0].Checks[0].Command: required for script checks",
		head + `"Checks":[{"Type":"script","Command":"x","Args":"y","Interval":1,"Timeout":1}]}]}]}]}`: "Job.TaskGroups[0].Tasks[0].Services[0].Checks[0].Args: must be an array (got a string)",
	}
	for src, want := range cases {
		_, _, err := ParseAPIJob([]byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", src, err, want)
		}
	}
}
