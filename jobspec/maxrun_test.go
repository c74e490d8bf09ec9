package jobspec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

func TestMaxRunDuration(t *testing.T) {
	src := "job \"j\" {\n  type = \"batch\"\n  group \"g\" {\n    max_run_duration = \"90m\"\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n}\n"
	job, _, err := Parse("m.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := job.TaskGroups[0].MaxRunDuration; d == nil || *d != 90*time.Minute {
		t.Fatalf("max_run_duration %v", d)
	}
	data, _ := json.Marshal(job)
	back, _, err := ParseAPIJob(data)
	if err != nil || back.TaskGroups[0].MaxRunDuration == nil || *back.TaskGroups[0].MaxRunDuration != 90*time.Minute {
		t.Fatalf("round trip: %v %v", err, back)
	}

	// Nomad's Go client.
	nj := api.NewBatchJob("b", "b", "global", 50)
	tg := api.NewTaskGroup("g", 1)
	d := 5 * time.Second
	tg.MaxRunDuration = &d
	tg.AddTask(api.NewTask("t", "mock"))
	nj.AddTaskGroup(tg)
	data, _ = json.Marshal(map[string]any{"Job": nj})
	got, _, err := ParseAPIJob(data)
	if err != nil || got.TaskGroups[0].MaxRunDuration == nil || *got.TaskGroups[0].MaxRunDuration != d {
		t.Fatalf("from Nomad's client: %v %+v", err, got)
	}

	// Zero asks for no bound.
	zero := strings.Replace(src, `"90m"`, `"0s"`, 1)
	if job, _, err := Parse("m.hcl", []byte(zero), Options{}); err != nil || job.TaskGroups[0].MaxRunDuration != nil {
		t.Fatalf("zero: %v %v", err, job)
	}
}

func TestMaxRunDurationErrors(t *testing.T) {
	for _, c := range []rule{
		{"negative", jobWith("  type = \"batch\"", "    max_run_duration = \"-1s\""), "group.max_run_duration", 4, "group.max_run_duration must not be negative (got -1s)", false},
		{"service job", jobWith("", "    max_run_duration = \"1h\""), "group.max_run_duration", 4, `group.max_run_duration is for batch and sysbatch jobs only (this job's type is "service")`, false},
		{"system job", jobWith("  type = \"system\"", "    max_run_duration = \"1h\""), "group.max_run_duration", 4, `is for batch and sysbatch jobs only (this job's type is "system")`, false},
		{"not a duration", jobWith("  type = \"batch\"", "    max_run_duration = 5"), "group.max_run_duration", 4, "group.max_run_duration must be a duration string", false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
	_, _, err := ParseAPIJob([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","MaxRunDuration":1000000000,"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	if err == nil || !strings.Contains(err.Error(), `Job.TaskGroups[0].MaxRunDuration: for batch and sysbatch jobs only (this job's type is "service")`) {
		t.Fatalf("API: %v", err)
	}
}
