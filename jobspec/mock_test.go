package jobspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// Nomad's name for its test driver, mock_driver, is accepted as the mock
// driver, its name kept as written.
func TestMockDriverAlias(t *testing.T) {
	src := "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock_driver\"\n      config {\n        stdout_string = \"hello\"\n      }\n    }\n  }\n}\n"
	job, _, err := Parse("j.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := job.TaskGroups[0].Tasks[0].Driver; d != structs.DriverMockNomad {
		t.Fatalf("driver %q", d)
	}
	api := `{"Job": {"ID": "j", "Type": "batch", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver", "Config": {"stdout_string": "hello"}}]}]}}`
	if _, _, err := ParseAPIJob([]byte(api)); err != nil {
		t.Fatal(err)
	}
}

func TestMockOutputRules(t *testing.T) {
	task := func(cfg string) string {
		return "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock_driver\"\n      config {\n" + cfg + "\n      }\n    }\n  }\n}\n"
	}
	big := strings.Repeat("x", structs.MockMaxOutputBytes+1)
	for _, c := range []rule{
		{"stdout_string not a string", task("        stdout_string = 3"), "", 6, "stdout_string must be a string", false},
		{"stderr_string too large", task("        stderr_string = \"" + big + "\""), "", 6, "more than 1000000", false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "m.hcl", c) })
	}
	api := `{"Job": {"ID": "j", "Type": "batch", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock", "Config": {"stdout_string": 5}}]}]}}`
	_, _, err := ParseAPIJob([]byte(api))
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.Diagnostics) != 1 || !strings.Contains(errs.Diagnostics[0].Field, "Config.stdout_string") {
		t.Fatalf("got %v", err)
	}
}
