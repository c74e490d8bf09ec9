package jobspec

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// resources as Nomad reads them: memory_max = -1 sets no hard limit; a
// task's disk is accepted with a warning and dropped, as Nomad parses it and
// ignores it (the group's ephemeral_disk sizes a task's disk).
func TestResourcesAsNomad(t *testing.T) {
	task := func(res string) string {
		return "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n      resources {\n" + res + "\n      }\n    }\n  }\n}\n"
	}
	for _, c := range []struct{ res, want string }{
		{"        memory = 64\n        memory_max = -1", `{"CPU":100,"MemoryMB":64,"MemoryMaxMB":-1}`},
		{"        memory = 64\n        memory_max = 128", `{"CPU":100,"MemoryMB":64,"MemoryMaxMB":128}`},
		{"        cores = 2", `{"CPU":0,"Cores":2,"MemoryMB":300}`},
		{"        disk = 0", `{"CPU":100,"MemoryMB":300}`},
	} {
		job, _, err := Parse("r.hcl", []byte(task(c.res)), Options{})
		if err != nil {
			t.Errorf("%s: %v", c.res, err)
			continue
		}
		got, _ := json.Marshal(job.TaskGroups[0].Tasks[0].Resources)
		if string(got) != c.want {
			t.Errorf("%s:\ngot  %s\nwant %s", c.res, got, c.want)
		}
	}
	for _, c := range []struct{ res, want string }{
		{"        memory = 64\n        memory_max = -2", "r.hcl:7:9: resources.memory_max must be -1 (no limit), 0 (memory is the limit) or at least memory (got -2)"},
		{"        memory = 64\n        memory_max = 32", "resources.memory_max must not be less than memory (32 < 64)"},
	} {
		_, _, err := Parse("r.hcl", []byte(task(c.res)), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.res, err, c.want)
		}
	}
	job, warns, err := Parse("r.hcl", []byte(task("        memory = 64\n        disk = 64")), Options{})
	if err != nil {
		t.Fatalf("disk = 64: %v", err)
	}
	if got, _ := json.Marshal(job.TaskGroups[0].Tasks[0].Resources); string(got) != `{"CPU":100,"MemoryMB":64}` {
		t.Errorf("disk = 64: resources %s", got)
	}
	if w := fmt.Sprint(warns); !strings.Contains(w, "r.hcl:7:9") || !strings.Contains(w, "resources.disk is not supported by drover and is ignored (Nomad parses it and ignores it too") {
		t.Errorf("disk = 64: warnings %v", warns)
	}
	api, warns, err := ParseAPIJob([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock","Resources":{"DiskMB":300}}]}]}`))
	if err != nil {
		t.Fatalf("API disk: %v", err)
	}
	if r := api.TaskGroups[0].Tasks[0].Resources; r != nil && r.DiskMB != 0 {
		t.Errorf("API disk kept: %d", r.DiskMB)
	}
	if w := fmt.Sprint(warns); !strings.Contains(w, "Resources.DiskMB") || !strings.Contains(w, "Nomad parses it and ignores it too") {
		t.Errorf("API disk: warnings %v", warns)
	}
}
