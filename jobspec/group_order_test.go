package jobspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// Groups one at a time (website/rollouts.md#groups-one-at-a-time): the
// job-level update block's group_order and pause_between_groups — their
// validation in job files and API JSON, and that they stay in Job.Update,
// out of the groups' merged strategies.

// orderJob is a job of three groups, db, api (count 2) and web (count 2).
// Its job-level update block (line 3) holds jobLines, from line 4; group
// api's update block (line 13 + len(jobLines); none when apiLines is
// empty) holds apiLines, from line 14 + len(jobLines).
func orderJob(jobType string, jobLines []string, apiLines ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job \"j\" {\n  type = %q\n  update {\n", jobType)
	for _, l := range jobLines {
		b.WriteString("    " + l + "\n")
	}
	b.WriteString("  }\n")
	group := func(name string, count int, lines []string) {
		fmt.Fprintf(&b, "  group %q {\n    count = %d\n", name, count)
		if len(lines) > 0 {
			b.WriteString("    update {\n")
			for _, l := range lines {
				b.WriteString("      " + l + "\n")
			}
			b.WriteString("    }\n")
		}
		b.WriteString("    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n")
	}
	group("db", 1, nil)
	group("api", 2, apiLines)
	group("web", 2, nil)
	b.WriteString("}\n")
	return b.String()
}

// groupOrderRules are the rules over job files.
func groupOrderRules() []rule {
	order := `group_order = ["db", "api"]`
	return []rule{
		// Job level only.
		{"group_order in a group", orderJob("service", nil, `group_order = ["api"]`), "update.group_order", 14,
			"update.group_order is allowed in the job-level update block only (the job's groups roll one at a time in its order)", false},
		{"pause_between_groups in a group", orderJob("service", []string{order}, "canary = 1", `pause_between_groups = "10s"`), "update.pause_between_groups", 16,
			"update.pause_between_groups is allowed in the job-level update block only", false},
		{"an empty group_order in a group", orderJob("service", nil, "group_order = []"), "update.group_order", 14,
			"update.group_order is allowed in the job-level update block only", false},
		{"a zero pause in a group", orderJob("service", nil, `pause_between_groups = "0s"`), "update.pause_between_groups", 14,
			"update.pause_between_groups is allowed in the job-level update block only", false},

		// The names.
		{"a name that is no group", orderJob("service", []string{`group_order = ["db", "apii"]`}), "update.group_order", 4,
			`update.group_order names "apii", which is not a group of job "j" (did you mean api?)`, false},
		{"a name far from any group", orderJob("service", []string{`group_order = ["cache"]`}), "update.group_order", 4,
			`update.group_order names "cache", which is not a group of job "j" (its groups: db, api, web)`, false},
		{"an empty name", orderJob("service", []string{`group_order = ["db", ""]`}), "update.group_order", 4,
			`update.group_order names "", which is not a group of job "j"`, false},
		{"a name twice", orderJob("service", []string{`group_order = ["db", "api", "db"]`}), "update.group_order", 4,
			`update.group_order names group "db" twice (first at line 4)`, false},
		{"a name twice, one per line", orderJob("service", []string{"group_order = [", `  "api",`, `  "db",`, `  "api",`, "]"}), "update.group_order", 7,
			`update.group_order names group "api" twice (first at line 5)`, false},

		// The shape.
		{"group_order a string", orderJob("service", []string{`group_order = "db"`}), "update.group_order", 4,
			`update.group_order must be a list of group names (got "db")`, false},
		{"group_order a number", orderJob("service", []string{`group_order = 1`}), "update.group_order", 4,
			"update.group_order must be a list of group names (got number)", false},
		{"group_order of lists", orderJob("service", []string{`group_order = ["db", ["api"]]`}), "update.group_order", 4,
			"update.group_order must list group names as strings", false},
		{"unknown attribute", orderJob("service", []string{`group_ordr = ["db"]`}), "update.group_ordr", 4,
			`unknown attribute "group_ordr" in update (did you mean group_order?)`, false},

		// The pause.
		{"pause negative", orderJob("service", []string{order, `pause_between_groups = "-1s"`}), "update.pause_between_groups", 5,
			"update.pause_between_groups must not be negative (got -1s)", false},
		{"pause not a duration", orderJob("service", []string{order, `pause_between_groups = "half a minute"`}), "update.pause_between_groups", 5,
			`update.pause_between_groups: invalid duration "half a minute"`, false},
		{"pause without group_order", orderJob("service", []string{`pause_between_groups = "30s"`}), "update.pause_between_groups", 4,
			"update.pause_between_groups needs group_order (it is the pause after a group is done before the next one starts)", false},
		{"pause with an empty group_order", orderJob("service", []string{"group_order = []", `pause_between_groups = "30s"`}), "update.pause_between_groups", 5,
			"update.pause_between_groups needs group_order", false},

		// A batch job has no update block at all.
		{"group_order on a batch job", orderJob("batch", []string{order}), "update", 3, "update is not allowed for batch jobs", false},
		{"group_order in a batch group", orderJob("batch", nil, order), "update", 13, "update is not allowed for batch jobs", false},
	}
}

func TestGroupOrderValidationRules(t *testing.T) {
	for _, c := range groupOrderRules() {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
}

// apiOrderJob is orderJob in API JSON: the job-level update block on line
// 4, group api's on line 7 (each left out when empty).
func apiOrderJob(jobType, jobUpdate, apiUpdate string) string {
	opt := func(v string) string {
		if v == "" {
			return ""
		}
		return `"Update": ` + v + ", "
	}
	const task = `"Tasks": [{"Name": "t", "Driver": "mock"}]`
	return "{\"Job\": {\n" +
		"  \"ID\": \"j\",\n" +
		fmt.Sprintf("  \"Type\": %q,\n", jobType) +
		"  " + opt(jobUpdate) + "\n" +
		"  \"TaskGroups\": [\n" +
		`    {"Name": "db", "Count": 1, ` + task + "},\n" +
		`    {"Name": "api", "Count": 2, ` + opt(apiUpdate) + task + "},\n" +
		`    {"Name": "web", "Count": 2, ` + task + "}\n" +
		"  ]\n" +
		"}}\n"
}

// groupOrderJSONRules are the same rules over API JSON: the field is the
// JSON path, the line that of the value.
func groupOrderJSONRules() []rule {
	const g = "Job.TaskGroups[1].Update."
	return []rule{
		{"GroupOrder in a group", apiOrderJob("service", "", `{"GroupOrder": ["api"]}`), g + "GroupOrder", 7,
			g + "GroupOrder is allowed in the job-level update block only", false},
		{"PauseBetweenGroups in a group", apiOrderJob("service", `{"GroupOrder": ["db"]}`, `{"Canary": 1, "PauseBetweenGroups": 1000000000}`), g + "PauseBetweenGroups", 7,
			g + "PauseBetweenGroups is allowed in the job-level update block only", false},
		{"GroupOrder names no group", apiOrderJob("service", `{"GroupOrder": ["db", "webb"]}`, ""), "Job.Update.GroupOrder[1]", 4,
			`Job.Update.GroupOrder[1] names "webb", which is not a group of job "j" (did you mean web?)`, false},
		{"GroupOrder names a group twice", apiOrderJob("service", `{"GroupOrder": ["web", "db", "web"]}`, ""), "Job.Update.GroupOrder[2]", 4,
			`Job.Update.GroupOrder[2] names group "web" twice`, false},
		{"GroupOrder not an array", apiOrderJob("service", `{"GroupOrder": "db"}`, ""), "Job.Update.GroupOrder", 4,
			"Job.Update.GroupOrder must be an array (got a string)", false},
		{"GroupOrder of numbers", apiOrderJob("service", `{"GroupOrder": ["db", 2]}`, ""), "Job.Update.GroupOrder[1]", 4,
			"Job.Update.GroupOrder[1] must be a string (got a number)", false},
		{"PauseBetweenGroups negative", apiOrderJob("service", `{"GroupOrder": ["db"], "PauseBetweenGroups": -1}`, ""), "Job.Update.PauseBetweenGroups", 4,
			"Job.Update.PauseBetweenGroups must not be negative (got -1ns)", false},
		{"PauseBetweenGroups a string", apiOrderJob("service", `{"GroupOrder": ["db"], "PauseBetweenGroups": "30s"}`, ""), "Job.Update.PauseBetweenGroups", 4,
			"Job.Update.PauseBetweenGroups must be a number (got a string)", false},
		{"PauseBetweenGroups without GroupOrder", apiOrderJob("service", `{"GroupOrder": null, "PauseBetweenGroups": 30000000000}`, ""), "Job.Update.PauseBetweenGroups", 4,
			"Job.Update.PauseBetweenGroups needs group_order", false},
		{"GroupOrder on a batch job", apiOrderJob("batch", `{"GroupOrder": ["db"]}`, ""), "Job.Update", 4,
			"Job.Update is not allowed for batch jobs", false},
		{"GroupOrder in a batch group", apiOrderJob("batch", "", `{"GroupOrder": ["db"]}`), "Job.TaskGroups[1].Update", 7,
			"Job.TaskGroups[1].Update is not allowed for batch jobs", false},
	}
}

func TestGroupOrderValidationRulesJSON(t *testing.T) {
	for _, c := range groupOrderJSONRules() {
		t.Run(c.name, func(t *testing.T) {
			checkRule(t, "job.json", c)
			// Sent to the API, the same problem is named by its path.
			_, _, err := ParseAPIJob([]byte(c.src))
			want := c.field + ": " + strings.TrimPrefix(strings.TrimPrefix(c.msg, c.field+" "), "is ")
			if !strings.Contains(fmt.Sprint(err), want) {
				t.Errorf("ParseAPIJob: no %q in\n%v", want, err)
			}
		})
	}
}

// TestGroupOrderErrorsAllAtOnce: every broken field is reported in one go,
// each at its own line, along with the update block's other errors.
func TestGroupOrderErrorsAllAtOnce(t *testing.T) {
	src := orderJob("service", []string{"max_surge = -1", `group_order = ["db", "cache", "db"]`, `pause_between_groups = "-5s"`},
		`group_order = ["api"]`, `pause_between_groups = "1s"`)
	_, _, err := Parse("v.hcl", []byte(src), Options{})
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v", err)
	}
	var got []string
	for _, d := range errs.Diagnostics {
		got = append(got, fmt.Sprintf("%d %s", d.Line, d.Field))
	}
	// max_surge, inherited by every group, is reported once, at the
	// job-level line.
	want := "4 update.max_surge|5 update.group_order|5 update.group_order|6 update.pause_between_groups|" +
		"17 update.group_order|18 update.pause_between_groups"
	if strings.Join(got, "|") != want {
		t.Errorf("got %s\nwant %s\n%v", strings.Join(got, "|"), want, err)
	}
}

// TestGroupOrderStaysAtJobLevel: group_order and pause_between_groups are
// kept in Job.Update alone — every group's merged strategy leaves them
// out, whether the group writes a block of its own or not — and the job
// rolls the named groups first, the others in file order.
func TestGroupOrderStaysAtJobLevel(t *testing.T) {
	hclJob := orderJob("service", []string{`min_healthy_time = "5s"`, `group_order = ["web", "db"]`, `pause_between_groups = "30s"`}, "canary = 1")
	jsonJob := apiOrderJob("service", `{"MinHealthyTime": 5000000000, "GroupOrder": ["web", "db"], "PauseBetweenGroups": 30000000000}`,
		`{"Canary": 1, "GroupOrder": null, "PauseBetweenGroups": null}`)
	for name, parse := range map[string]func() (*structs.Job, []Diagnostic, error){
		"hcl":  func() (*structs.Job, []Diagnostic, error) { return Parse("o.hcl", []byte(hclJob), Options{}) },
		"json": func() (*structs.Job, []Diagnostic, error) { return ParseAPIJob([]byte(jsonJob)) },
	} {
		t.Run(name, func(t *testing.T) {
			j, warns, err := parse()
			if err != nil || len(warns) != 0 {
				t.Fatalf("%v %v", err, warns)
			}
			if u := j.Update; !slices.Equal(u.GroupOrder, []string{"web", "db"}) || u.PauseBetweenGroups != 30*time.Second {
				t.Errorf("job level: %+v", u)
			}
			for _, tg := range j.TaskGroups {
				if u := tg.Update; u.GroupOrder != nil || u.PauseBetweenGroups != 0 || u.MinHealthyTime != 5*time.Second {
					t.Errorf("group %s: %+v", tg.Name, u)
				}
			}
			if got := j.GroupRolloutOrder(); !slices.Equal(got, []string{"web", "db", "api"}) {
				t.Errorf("rollout order %v", got)
			}
			// drover's own job JSON reads back as the same job.
			data, _ := json.Marshal(j)
			back, _, err := ParseAPIJob(data)
			if err != nil || !reflect.DeepEqual(j, back) {
				t.Errorf("round trip: %v\n%s", err, data)
			}
			if out, _ := json.Marshal(j.TaskGroups[0].Update); strings.Contains(string(out), "Group") {
				t.Errorf("a group's strategy says %s", out)
			}
		})
	}
}

// TestGroupOrderNone: without group_order the groups roll at once; an
// empty list is none, and a system job may order its groups too.
func TestGroupOrderNone(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		want []string
	}{
		{"no update block fields", orderJob("service", nil), nil},
		{"an empty list", orderJob("service", []string{"group_order = []", `pause_between_groups = "0s"`}), nil},
		{"a system job", orderJob("system", []string{`group_order = ["api"]`}), []string{"api", "db", "web"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, _, err := Parse("o.hcl", []byte(c.src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := j.GroupRolloutOrder(); !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if c.want == nil && j.Update.GroupOrder != nil {
				t.Errorf("GroupOrder %#v, want nil", j.Update.GroupOrder)
			}
		})
	}
	// A job from Nomad's Go client, which knows no group order, gets none.
	data, _ := json.Marshal(map[string]any{"Job": nomadClientJob()})
	nj, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	if nj.Update.GroupOrder != nil || nj.Update.PauseBetweenGroups != 0 || nj.GroupsInOrder() {
		t.Errorf("group order from nowhere: %+v", nj.Update)
	}
}
