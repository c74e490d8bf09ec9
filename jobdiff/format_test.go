package jobdiff

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestFormatGolden renders a table of job changes as job plan prints them
// and compares each with its golden file: every annotation appears at
// least once (forces create, forces destroy, forces create/destroy update,
// forces in-place update, and a count's), in Nomad's layout.
func TestFormatGolden(t *testing.T) {
	cases := []struct {
		name    string
		change  func(j *structs.Job)
		verbose bool
		updates map[string]uint64
	}{
		{"env-destructive", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env["GREETING"] = "hi" }, false,
			map[string]uint64{"create/destroy update": 2}},
		{"meta-in-place", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Meta["owner"] = "team-b" }, false,
			map[string]uint64{"in-place update": 2}},
		{"count-up", func(j *structs.Job) { j.TaskGroups[0].Count = 4 }, false,
			map[string]uint64{"create": 2, "ignore": 2}},
		{"count-down", func(j *structs.Job) { j.TaskGroups[0].Count = 1 }, false,
			map[string]uint64{"destroy": 1, "ignore": 1}},
		{"task-added-removed", func(j *structs.Job) {
			t := &structs.Task{Name: "logger", Driver: structs.DriverRawExec, Config: map[string]any{"command": "/bin/true"}}
			j.TaskGroups[0].Tasks = []*structs.Task{j.TaskGroups[0].Tasks[0], t}
		}, false, map[string]uint64{"create/destroy update": 2}},
		{"config-and-check-verbose", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Config["args"] = []any{"60"}
			j.TaskGroups[0].Tasks[0].Services[0].Checks[0].Interval = 5 * time.Second
		}, true, map[string]uint64{"canary": 1, "ignore": 2}},
		{"template-changed", func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Templates = []*structs.Template{{
				DestPath: "local/app.conf", EmbeddedTmpl: "port={{ env \"NOMAD_PORT_http\" }}\n", ChangeMode: "restart",
				Perms: "0644", LeftDelim: "{{", RightDelim: "}}",
			}}
		}, false, map[string]uint64{"create/destroy update": 2}},
		{"update-block-and-datacenters", func(j *structs.Job) {
			j.Datacenters = []string{"dc1", "dc2"}
			j.TaskGroups[0].Update.MaxParallel = 2
			j.TaskGroups[0].Update.MaxSurge = &structs.Amount{Value: 25, Percent: true}
		}, false, map[string]uint64{"create/destroy update": 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old, cur := statetest.Job("web", 2), statetest.Job("web", 2)
			c.change(cur)
			d := Jobs(old, cur, true)
			for _, g := range d.TaskGroups {
				g.Updates = c.updates
			}
			got := Format(d, c.verbose)
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./jobdiff -update)", err)
			}
			if got != string(want) {
				t.Fatalf("diff of %s:\n%s\nwant:\n%s", c.name, got, want)
			}
		})
	}
}
