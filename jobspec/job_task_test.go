package jobspec

import (
	"encoding/json"
	"strings"
	"testing"
)

// A task written straight in a job is a group of the task's name with
// count 1, before the job's groups, as Nomad's job files make it.
func TestTaskInJob(t *testing.T) {
	src := `job "j" {
  task "solo" {
    driver = "mock"
    resources {
      cpu = 50
    }
  }
  group "g" {
    count = 2
    task "t" { driver = "mock" }
  }
}
`
	job, _, err := Parse("t.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range job.TaskGroups {
		b, _ := json.Marshal(map[string]any{"Name": tg.Name, "Count": tg.Count, "Task": tg.Tasks[0].Name, "CPU": tg.Tasks[0].Resources.CPU})
		got = append(got, string(b))
	}
	want := `{"CPU":50,"Count":1,"Name":"solo","Task":"solo"} {"CPU":100,"Count":2,"Name":"g","Task":"t"}`
	if strings.Join(got, " ") != want {
		t.Fatalf("got %s\nwant %s", strings.Join(got, " "), want)
	}

	// A task of the same name as a group is a duplicate group, located.
	dup := "job \"j\" {\n  task \"g\" {\n    driver = \"mock\"\n  }\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n}\n"
	_, _, err = Parse("t.hcl", []byte(dup), Options{})
	if err == nil || !strings.Contains(err.Error(), `t.hcl:5:9: group "g" is defined twice (first at line 2)`) {
		t.Fatalf("duplicate: %v", err)
	}
	// A job-level task's own errors are located in it.
	bad := "job \"j\" {\n  task \"solo\" {\n    driver = \"mock\"\n    kill_timeout = \"-1s\"\n  }\n}\n"
	_, _, err = Parse("t.hcl", []byte(bad), Options{})
	if err == nil || !strings.Contains(err.Error(), "t.hcl:4:") {
		t.Fatalf("located error: %v", err)
	}
}
