package jobspec

import (
	"strings"
	"testing"
)

// A task's name is its directory in the allocation: as Nomad's
// Task.Validate, it may not hold a slash (either kind), and drover also
// refuses "." and ".." and NUL, in HCL (with the file and line) and in
// the API's JSON. Other characters, dots within a name included, are
// names as any.
func TestTaskNameNamesADirectory(t *testing.T) {
	apiJob := func(task string) []byte {
		return []byte(`{"ID":"j","TaskGroups":[{"Name":"g","Tasks":[{"Name":` + jsonString(task) + `,"Driver":"mock"}]}]}`)
	}
	hclJob := func(task string) []byte {
		return []byte("job \"j\" {\n  group \"g\" {\n    task " + jsonString(task) + " {\n      driver = \"mock\"\n    }\n  }\n}\n")
	}
	for _, c := range []struct{ name, want string }{
		{"../../evil", "must not contain a slash"},
		{"a/b", "must not contain a slash"},
		{`a\b`, "must not contain a slash"},
		{"..", `must not be ".."`},
		{".", `must not be "."`},
		{"nul\x00", "must not contain a NUL character"},
	} {
		if _, _, err := ParseAPIJob(apiJob(c.name)); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Tasks[0].Name") {
			t.Errorf("API task %q: %v, want Tasks[0].Name: %s", c.name, err, c.want)
		}
		if _, _, err := Parse("j.hcl", hclJob(c.name), Options{}); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "j.hcl:3:") {
			t.Errorf("HCL task %q: %v, want j.hcl:3: ... %s", c.name, err, c.want)
		}
	}
	for _, ok := range []string{"web", "web.v2", "...dots", "a b", "字"} {
		if _, _, err := ParseAPIJob(apiJob(ok)); err != nil {
			t.Errorf("API task %q: %v", ok, err)
		}
		if _, _, err := Parse("j.hcl", hclJob(ok), Options{}); err != nil {
			t.Errorf("HCL task %q: %v", ok, err)
		}
	}
}
