package jobspec

import (
	"encoding/json"
	"strings"
	"testing"
)

// resources as Nomad reads them: memory_max = -1 sets no hard limit; a
// task's disk is refused (Nomad's tasks cannot ask for disk: the group's
// ephemeral_disk sizes it), a zero disk passes.
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
		{"        disk = 500", "r.hcl:6:9: resources.disk is not supported by drover (a task cannot ask for disk, as in Nomad: set the group's ephemeral_disk size)"},
	} {
		_, _, err := Parse("r.hcl", []byte(task(c.res)), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.res, err, c.want)
		}
	}
	_, _, err := ParseAPIJob([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock","Resources":{"DiskMB":300}}]}]}`))
	if err == nil || !strings.Contains(err.Error(), "Job.TaskGroups[0].Tasks[0].Resources.DiskMB: not supported by drover") {
		t.Fatalf("API disk: %v", err)
	}
}
