package jobspec

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/nomad/api"
)

// nomadClientJob builds a job the way Nomad's Go client does: most fields
// nil.
func nomadClientJob() *api.Job {
	job := api.NewServiceJob("web", "web", "global", 60)
	job.Datacenters = []string{"dc1"}
	mp, mht := 2, 5*time.Second
	job.Update = &api.UpdateStrategy{MaxParallel: &mp, MinHealthyTime: &mht}
	tg := api.NewTaskGroup("app", 3)
	canary := 1
	tg.Update = &api.UpdateStrategy{Canary: &canary}
	tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}}}}
	tg.Services = []*api.Service{{Name: "web", PortLabel: "http", Checks: []api.ServiceCheck{{Type: "http", Path: "/", Interval: time.Second, Timeout: time.Second}}}}
	task := api.NewTask("srv", "raw_exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"60"})
	task.Env = map[string]string{"V": "1"}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func TestParseAPIJobFromNomadClient(t *testing.T) {
	data, err := json.Marshal(map[string]any{"Job": nomadClientJob()})
	if err != nil {
		t.Fatal(err)
	}
	job, warns, err := ParseAPIJob(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	u := job.TaskGroups[0].Update
	if u.MaxParallel != 2 || u.Canary != 1 || u.MinHealthyTime != 5*time.Second || u.HealthyDeadline != 5*time.Minute {
		t.Errorf("merge: %+v", u)
	}
	if job.Priority != 60 || job.TaskGroups[0].Count != 3 || job.TaskGroups[0].Tasks[0].Config["args"].([]any)[0] != "60" {
		t.Errorf("job: %+v", job)
	}
}

func TestParseAPIJobErrors(t *testing.T) {
	cases := []struct {
		name, json string
		want       []string
	}{
		{"unsupported set", `{"ID":"x","TaskGroups":[{"Name":"a","Volumes":{"d":{"Type":"csi","Source":"d","AccessMode":"single-node-writer"}},"Tasks":[{"Name":"t","Driver":"mock"}]}]}`,
			[]string{"Job.TaskGroups[0].Volumes.d.AccessMode: not supported by drover"}},
		{"unsupported empty is fine", `{"ID":"x","Affinities":[],"Periodic":null,"TaskGroups":[{"Name":"a","Volumes":{},"Scaling":null,"Tasks":[{"Name":"t","Driver":"mock","Artifacts":null,"Lifecycle":null}]}]}`,
			nil},
		{"unknown field", `{"ID":"x","TaskGroups":[{"Name":"a","Cuont":2,"Tasks":[{"Name":"t","Driver":"mock"}]}]}`,
			[]string{"Job.TaskGroups[0].Cuont: not a field of a Nomad group (did you mean Count?)"}},
		{"wrong type", `{"ID":"x","TaskGroups":[{"Name":"a","Count":"2","Tasks":[{"Name":"t","Driver":"mock"}]}]}`,
			[]string{"Job.TaskGroups[0].Count: must be a number (got a string)"}},
		{"rule", `{"ID":"x","TaskGroups":[{"Name":"a","Update":{"MaxParallel":-1},"Tasks":[{"Name":"t","Driver":"mock"}]}]}`,
			[]string{"Job.TaskGroups[0].Update.MaxParallel: must not be negative (got -1)"}},
		{"migrate rules", `{"ID":"x","Migrate":{"HealthCheck":"manual"},"TaskGroups":[{"Name":"a","Migrate":{"MaxParallel":-1,"MinHealthyTime":60000000000,"HealthyDeadline":30000000000},"Tasks":[{"Name":"t","Driver":"mock"}]}]}`,
			[]string{"Job.Migrate.HealthCheck: must be checks or task_states (got \"manual\")",
				"Job.TaskGroups[0].Migrate.MaxParallel: must not be negative (got -1)",
				"Job.TaskGroups[0].Migrate.MinHealthyTime: must be less than healthy_deadline (1m0s >= 30s)"}},
		{"migrate on a batch job", `{"ID":"x","Type":"batch","TaskGroups":[{"Name":"a","Migrate":{"MaxParallel":1},"Tasks":[{"Name":"t","Driver":"mock"}]}]}`,
			[]string{`Job.TaskGroups[0].Migrate: job type "batch" does not allow a migrate block`}},
		{"migrate field of the wrong type", `{"ID":"x","TaskGroups":[{"Name":"a","Migrate":{"MaxParallel":"2"},"Tasks":[{"Name":"t","Driver":"mock"}]}]}`,
			[]string{"Job.TaskGroups[0].Migrate.MaxParallel: must be a number (got a string)"}},
		{"not json", `{"ID":`, []string{"Job: invalid JSON"}},
		{"not an object", `[1]`, []string{"Job: must be an object (got an array)"}},
		{"fraction", `{"ID":"x","Priority":1.5,"TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock"}]}]}`,
			[]string{"Job.Priority: must be a whole number (got 1.5)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseAPIJob([]byte(c.json))
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("missing %q in:\n%v", w, err)
				}
			}
		})
	}
}

// TestJSONFileLocations: a .json job file's diagnostics carry line and
// column as well as the JSON path.
func TestJSONFileLocations(t *testing.T) {
	src := "{\"Job\": {\n  \"ID\": \"x\",\n  \"TaskGroups\": [{\n    \"Name\": \"a\",\n    \"Update\": {\"MaxParallel\": -1},\n    \"Tasks\": [{\"Name\": \"t\", \"Driver\": \"mock\"}]}]}}"
	_, _, err := Parse("job.json", []byte(src), Options{})
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.Diagnostics) != 1 {
		t.Fatalf("got %v", err)
	}
	d := errs.Diagnostics[0]
	want := Diagnostic{File: "job.json", Line: 5, Column: 31, Field: "Job.TaskGroups[0].Update.MaxParallel", Message: "Job.TaskGroups[0].Update.MaxParallel must not be negative (got -1)"}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got %+v\nwant %+v", d, want)
	}
}

// TestGrammarCoversNomadAPI: every field of Nomad's API types is in the
// grammar table, so nothing Nomad defines is "unknown" or silently
// dropped.
func TestGrammarCoversNomadAPI(t *testing.T) {
	for typ, block := range nomadBlockOf {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name := jsonName(f)
			if name == "" || !f.IsExported() {
				continue
			}
			if _, ok := lookupJSON(block, name); !ok {
				t.Errorf("%s (%s): field %s is not in the grammar table", block, typ.Name(), name)
			}
			if tag := f.Tag.Get("hcl"); tag != "" {
				hclName, _, _ := strings.Cut(tag, ",")
				if hclName == "" || strings.Contains(tag, ",label") {
					continue
				}
				if _, ok := lookupHCL(block, hclName); !ok {
					t.Errorf("%s: job-file name %s is not in the grammar table", block, hclName)
				}
			}
		}
	}
}

// TestNomadDefaultsAccepted: values of unsupported elements that ask for
// what drover does anyway pass silently, in JSON and HCL.
func TestNomadDefaultsAccepted(t *testing.T) {
	job := nomadClientJob()
	job.TaskGroups[0].Services[0].OnUpdate = "require_healthy"
	job.TaskGroups[0].Services[0].AddressMode = "auto"
	data, _ := json.Marshal(job)
	if _, warns, err := ParseAPIJob(data); err != nil || len(warns) != 0 {
		t.Fatalf("defaults refused: %v %v", err, warns)
	}
	// on_update is supported: "ignore" reaches the job, an unknown value
	// is refused.
	job.TaskGroups[0].Services[0].OnUpdate = "ignore"
	data, _ = json.Marshal(job)
	got, _, err := ParseAPIJob(data)
	if err != nil || got.TaskGroups[0].Services[0].OnUpdate != "ignore" {
		t.Fatalf("on_update = ignore: %v", err)
	}
	job.TaskGroups[0].Services[0].OnUpdate = "sometimes"
	data, _ = json.Marshal(job)
	if _, _, err := ParseAPIJob(data); err == nil || !strings.Contains(err.Error(), "Job.TaskGroups[0].Services[0].OnUpdate: must be require_healthy, ignore_warnings or ignore") {
		t.Fatalf("on_update = sometimes: %v", err)
	}
	src := "job \"j\" {\n  group \"g\" {\n    service {\n      on_update = \"require_healthy\"\n    }\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n}\n"
	if _, warns, err := Parse("j.hcl", []byte(src), Options{}); err != nil || len(warns) != 0 {
		t.Fatalf("HCL default refused: %v %v", err, warns)
	}
}

// TestCanonicalizedNomadJob: a job Nomad's client has canonicalized (every
// default written out) is accepted, its migrate block with Nomad's
// defaults.
func TestCanonicalizedNomadJob(t *testing.T) {
	job := nomadClientJob()
	job.Canonicalize()
	data, _ := json.Marshal(job)
	got, warns, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		if !strings.Contains(w.Message, "not supported by drover and is ignored") {
			t.Errorf("unexpected warning %v", w)
		}
	}
	if r := got.TaskGroups[0].Tasks[0].Resources; r.CPU != 100 || r.MemoryMB != 300 {
		t.Errorf("resources %+v", r)
	}
	if m := got.TaskGroups[0].Migrate; m == nil || *m != *structs.DefaultMigrateStrategy() {
		t.Errorf("migrate %+v, want Nomad's defaults", m)
	}
}

// TestZeroUnsupportedAttributes: in a job file as in JSON, an unsupported
// attribute set to its zero value is accepted silently.
func TestZeroUnsupportedAttributes(t *testing.T) {
	src := "job \"j\" {\n  all_at_once = false\n  group \"g\" {\n    prevent_reschedule_on_lost = null\n    task \"t\" {\n      driver = \"mock\"\n      kind = \"\"\n    }\n  }\n}\n"
	if _, warns, err := Parse("j.hcl", []byte(src), Options{}); err != nil || len(warns) != 0 {
		t.Fatalf("zero values refused: %v %v", err, warns)
	}
}

// TestJSONFileKeyCase: a field written in another case is named as Nomad
// spells it and placed where it is written.
func TestJSONFileKeyCase(t *testing.T) {
	src := "{\"Job\": {\n  \"ID\": \"x\",\n  \"TaskGroups\": [{\"Name\": \"a\", \"preventRescheduleOnLost\": true, \"Tasks\": [{\"Name\": \"t\", \"Driver\": \"mock\"}]}]}}"
	_, _, err := Parse("job.json", []byte(src), Options{})
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.Diagnostics) != 1 {
		t.Fatalf("got %v", err)
	}
	want := Diagnostic{File: "job.json", Line: 3, Column: 32, Field: "Job.TaskGroups[0].PreventRescheduleOnLost", Message: "Job.TaskGroups[0].PreventRescheduleOnLost is not supported by drover (lost allocations are always rescheduled)"}
	if d := errs.Diagnostics[0]; d != want {
		t.Errorf("got %+v\nwant %+v", d, want)
	}
}
