package jobspec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

// The parameterized, dispatch_payload and scaling blocks, written as
// Nomad's documentation writes them, and the API JSON of their canonical
// parse.
func TestDispatchAndScalingGolden(t *testing.T) {
	for _, c := range []struct {
		name, src string
		// part picks what is compared: the JSON of one piece of the job.
		part func(j any) any
		want string
	}{
		{"parameterized", `job "video-encode" {
  type = "batch"
  parameterized {
    payload       = "required"
    meta_required = ["dispatcher_email"]
    meta_optional = ["pager_email"]
  }
  group "encode" {
    task "ffmpeg" {
      driver = "raw_exec"
      config { command = "ffmpeg-wrapper" }
      dispatch_payload { file = "config.json" }
    }
  }
}`, nil, `{"DispatchPayload":{"File":"config.json"},"ParameterizedJob":{"Payload":"required","MetaRequired":["dispatcher_email"],"MetaOptional":["pager_email"]}}`},
		{"parameterized defaults", `job "p" {
  type = "batch"
  parameterized {}
  group "g" {
    task "t" { driver = "mock" }
  }
}`, nil, `{"DispatchPayload":null,"ParameterizedJob":{"Payload":"optional"}}`},
		{"scaling", `job "example" {
  group "cache" {
    count = 3
    scaling {
      enabled = true
      min     = 2
      max     = 10
      policy {
        evaluation_interval = "5s"
        cooldown            = "1m"
        check "active_connections" {
          source = "prometheus"
          query  = "scalar(open_connections_example_cache)"
          strategy "target-value" {
            target = 10
          }
        }
      }
    }
    task "redis" { driver = "mock" }
  }
}`, nil, `{"Count":3,"Scaling":{"ID":"","Type":"horizontal","Target":null,"Policy":{"check":[{"active_connections":{"query":"scalar(open_connections_example_cache)","source":"prometheus","strategy":[{"target-value":{"target":10}}]}}],"cooldown":"1m","evaluation_interval":"5s"},"Min":2,"Max":10,"Enabled":true,"CreateIndex":0,"ModifyIndex":0}}`},
		{"scaling min is the count, count the min", `job "example" {
  group "a" {
    scaling { max = 5 }
    task "t" { driver = "mock" }
  }
}`, nil, `{"Count":1,"Scaling":{"ID":"","Type":"horizontal","Target":null,"Policy":null,"Min":1,"Max":5,"Enabled":true,"CreateIndex":0,"ModifyIndex":0}}`},
		{"count from min", `job "example" {
  group "a" {
    scaling {
      min = 4
      max = 5
    }
    task "t" { driver = "mock" }
  }
}`, nil, `{"Count":4,"Scaling":{"ID":"","Type":"horizontal","Target":null,"Policy":null,"Min":4,"Max":5,"Enabled":true,"CreateIndex":0,"ModifyIndex":0}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			job, _, err := Parse("d.hcl", []byte(c.src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			tg, task := job.TaskGroups[0], job.TaskGroups[0].Tasks[0]
			var got any
			if job.ParameterizedJob != nil {
				got = map[string]any{"ParameterizedJob": job.ParameterizedJob, "DispatchPayload": task.DispatchPayload}
			} else {
				got = map[string]any{"Count": tg.Count, "Scaling": tg.Scaling}
			}
			data, _ := json.Marshal(got)
			if string(data) != c.want {
				t.Errorf("got\n%s\nwant\n%s", data, c.want)
			}
			// The API form parses to the same job.
			whole, _ := json.Marshal(job)
			back, _, err := ParseAPIJob(whole)
			if err != nil {
				t.Fatalf("round trip: %v", err)
			}
			if a, b := render(job, nil, nil), render(back, nil, nil); string(a) != string(b) {
				t.Errorf("round trip differs:\n%s\n%s", a, b)
			}
		})
	}
}

func TestDispatchAndScalingFromNomadClient(t *testing.T) {
	nj := api.NewBatchJob("enc", "enc", "global", 50)
	nj.ParameterizedJob = &api.ParameterizedJobConfig{Payload: "forbidden", MetaRequired: []string{"k"}}
	tg := api.NewTaskGroup("g", 2)
	minC, maxC := int64(1), int64(3)
	tg.Scaling = &api.ScalingPolicy{Min: &minC, Max: &maxC, Policy: map[string]any{"cooldown": "1m", "n": 2}}
	task := api.NewTask("t", "mock")
	task.DispatchPayload = &api.DispatchPayloadConfig{File: "in/payload"}
	tg.AddTask(task)
	nj.AddTaskGroup(tg)
	data, _ := json.Marshal(map[string]any{"Job": nj})
	got, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	p, s := got.ParameterizedJob, got.TaskGroups[0].Scaling
	if p == nil || p.Payload != "forbidden" || len(p.MetaRequired) != 1 ||
		s == nil || s.Min != 1 || s.Max != 3 || !s.Enabled || s.Policy["n"] != int64(2) ||
		got.TaskGroups[0].Tasks[0].DispatchPayload.File != "in/payload" {
		t.Fatalf("got %+v %+v", p, s)
	}
}

func TestDispatchAndScalingErrors(t *testing.T) {
	batch := "  type = \"batch\""
	for _, c := range []rule{
		{"service job", jobWith("  parameterized {}", ""), "parameterized", 2, "is only allowed for batch and sysbatch jobs (got service)", false},
		{"payload", jobWith(batch+"\n  parameterized { payload = \"maybe\" }", ""), "parameterized.payload", 3, `must be "optional", "required" or "forbidden" (got "maybe")`, false},
		{"meta both", jobWith(batch+"\n  parameterized {\n    meta_required = [\"a\"]\n    meta_optional = [\"a\"]\n  }", ""), "parameterized.meta_optional", 5, `"a" is also in meta_required`, false},
		{"no max", jobWith("", "    scaling { min = 1 }"), "scaling", 4, "scaling needs max", false},
		{"min defaults to the count", jobWith("", "    count = 9\n    scaling { max = 5 }"), "scaling.max", 5, "must not be less than min (5 < 9)", false},
		{"count above max", jobWith("", "    count = 9\n    scaling {\n      min = 1\n      max = 5\n    }"), "scaling.max", 7, "scaling.max must not be less than the group's count (5 < 9)", false},
		{"count below min", jobWith("", "    count = 1\n    scaling {\n      min = 2\n      max = 5\n    }"), "scaling.min", 6, "scaling.min must not be greater than the group's count (2 > 1)", false},
		{"max below min", jobWith("", "    scaling {\n      min = 6\n      max = 5\n    }"), "scaling.max", 6, "must not be less than min (5 < 6)", false},
		{"system job", jobWith("  type = \"system\"", "    scaling { max = 5 }"), "scaling", 4, "scaling is not allowed for system jobs", false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
	// Task scaling blocks are Nomad Enterprise's vertical scaling.
	src := "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n      scaling \"cpu\" {\n        max = 500\n      }\n    }\n  }\n}\n"
	if _, _, err := Parse("v.hcl", []byte(src), Options{}); err == nil || !strings.Contains(err.Error(), "task.scaling is not supported by drover") {
		t.Fatalf("task scaling: %v", err)
	}
	src = "job \"j\" {\n  type = \"batch\"\n  parameterized {}\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n      dispatch_payload { file = \"../../etc/x\" }\n    }\n  }\n}\n"
	if _, _, err := Parse("v.hcl", []byte(src), Options{}); err == nil || !strings.Contains(err.Error(), "dispatch_payload.file must be a relative path inside the task's local directory") {
		t.Fatalf("escaping file: %v", err)
	}
}
