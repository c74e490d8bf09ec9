package jobspec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/structs"
)

// The multiregion block: decoding in job files and API JSON, Nomad's
// defaults, and its located errors (website/multiregion.md#multi-region-jobs).

func init() {
	nomadBlockOf[reflect.TypeFor[api.Multiregion]()] = "multiregion"
	nomadBlockOf[reflect.TypeFor[api.MultiregionStrategy]()] = "strategy"
	nomadBlockOf[reflect.TypeFor[api.MultiregionRegion]()] = "region"
}

// mrJob is a service job whose multiregion block (line 2) holds lines from
// line 3 on.
func mrJob(typ string, lines ...string) string {
	return fmt.Sprintf("job \"j\" {\n  multiregion {\n    %s\n  }\n  type = %q\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n}\n",
		strings.Join(lines, "\n    "), typ)
}

func TestMultiregionHCL(t *testing.T) {
	src := mrJob("service",
		`strategy {`,
		`  max_parallel = 1`,
		`  on_failure = "fail_all"`,
		`}`,
		`region "east" {`,
		`  count = 3`,
		`  datacenters = ["east-1"]`,
		`  node_pool = "prod"`,
		`  meta {`,
		`    tier = "canary-region"`,
		`  }`,
		`}`,
		`region "west" {}`,
	)
	job, _, err := Parse("m.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &structs.Multiregion{
		Strategy: &structs.MultiregionStrategy{MaxParallel: 1, OnFailure: "fail_all"},
		Regions: []*structs.MultiregionRegion{
			{Name: "east", Count: 3, Datacenters: []string{"east-1"}, NodePool: "prod", Meta: map[string]string{"tier": "canary-region"}},
			{Name: "west", Count: 1},
		},
	}
	if !reflect.DeepEqual(job.Multiregion, want) {
		got, _ := json.Marshal(job.Multiregion)
		t.Fatalf("got %s", got)
	}
	if !job.IsMultiregion() {
		t.Fatal("not multiregion")
	}
	// The same job as API JSON, as drover stores it, parses back alike.
	data, _ := json.Marshal(job)
	back, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Multiregion, want) {
		t.Fatalf("round trip: %+v", back.Multiregion)
	}
}

// TestMultiregionNomadClient: a job as Nomad's Go client sends it, after
// its Canonicalize (count 1, empty lists and maps, a zero strategy).
func TestMultiregionNomadClient(t *testing.T) {
	j := api.NewServiceJob("web", "web", "global", 50)
	j.AddTaskGroup(api.NewTaskGroup("g", 2).AddTask(api.NewTask("t", "mock")))
	j.Multiregion = &api.Multiregion{Regions: []*api.MultiregionRegion{{Name: "east"}, {Name: "west", Count: new(2), Datacenters: []string{"w1"}}}}
	j.Canonicalize()
	data, _ := json.Marshal(map[string]any{"Job": j})
	job, _, err := ParseAPIJob(data)
	if err != nil {
		t.Fatal(err)
	}
	want := &structs.Multiregion{
		Strategy: &structs.MultiregionStrategy{},
		Regions: []*structs.MultiregionRegion{
			{Name: "east", Count: 1},
			{Name: "west", Count: 2, Datacenters: []string{"w1"}},
		},
	}
	if !reflect.DeepEqual(job.Multiregion, want) {
		got, _ := json.Marshal(job.Multiregion)
		t.Fatalf("got %s", got)
	}
}

// TestMultiregionNoRegions: a block that names no region asks for nothing.
func TestMultiregionNoRegions(t *testing.T) {
	job, _, err := Parse("m.hcl", []byte(mrJob("service", "strategy {", "  max_parallel = 1", "}")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Multiregion != nil || job.IsMultiregion() {
		t.Fatalf("got %+v", job.Multiregion)
	}
}

func multiregionRules() []rule {
	return []rule{
		{"region named twice", mrJob("service", `region "east" {}`, `region "east" {}`), "region", 4, `region "east" is named twice (first at line 3)`, false},
		{"empty name", mrJob("service", `region "" {}`), "region", 3, "must not be empty", false},
		{"negative count", mrJob("service", `region "east" {`, `  count = -1`, `}`), "region.count", 4, "must not be negative (got -1)", false},
		{"negative max_parallel", mrJob("service", `strategy {`, `  max_parallel = -2`, `}`, `region "east" {}`), "strategy.max_parallel", 4, "must not be negative (got -2)", false},
		{"unknown on_failure", mrJob("service", `strategy {`, `  on_failure = "fail_some"`, `}`, `region "east" {}`), "strategy.on_failure", 4, `must be "fail_all", "fail_local" or unset (got "fail_some")`, false},
		{"empty datacenter", mrJob("service", `region "east" {`, `  datacenters = [""]`, `}`), "region.datacenters", 4, "must not contain an empty name", false},
		{"strategy of a batch job", mrJob("batch", `strategy {`, `  max_parallel = 1`, `}`, `region "east" {}`), "strategy", 3, "is not allowed for batch jobs", false},
		{"on_failure of a system job", mrJob("system", `strategy {`, `  on_failure = "fail_all"`, `}`, `region "east" {}`), "strategy.on_failure", 4, "is not allowed for system jobs", false},
		{"unknown attribute", mrJob("service", `region "east" {`, `  cout = 1`, `}`), "region.cout", 4, `unknown attribute "cout" in region (did you mean count?)`, false},
		{"region without label", mrJob("service", `region {}`), "multiregion.region", 3, "region block needs 1 label(s), got 0", false},
		{"two strategies", mrJob("service", `strategy {}`, `strategy {}`, `region "east" {}`), "multiregion.strategy", 4, "duplicate strategy block", false},
		{"with periodic", strings.Replace(mrJob("batch", `region "east" {}`), "  type =", "  periodic {\n    crons = [\"* * * * *\"]\n  }\n  type =", 1), "multiregion", 2, "cannot be combined with periodic", false},
		{"with parameterized", strings.Replace(mrJob("batch", `region "east" {}`), "  type =", "  parameterized {}\n  type =", 1), "multiregion", 2, "cannot be combined with parameterized", false},
	}
}

func TestMultiregionRules(t *testing.T) {
	for _, c := range multiregionRules() {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "m.hcl", c) })
	}
}

// mrAPIJob is an API job (wrapped; the Multiregion value on line 3).
func mrAPIJob(typ, multiregion string) string {
	return "{\"Job\": {\n  \"ID\": \"j\", \"Type\": \"" + typ + "\",\n  \"Multiregion\": " + multiregion +
		",\n  \"TaskGroups\": [{\"Name\": \"g\", \"Tasks\": [{\"Name\": \"t\", \"Driver\": \"mock\"}]}]\n}}"
}

// TestMultiregionRulesJSON: the same errors in API JSON name the JSON
// field, as an HTTP 400 shows them.
func TestMultiregionRulesJSON(t *testing.T) {
	const m = "Job.Multiregion."
	for _, c := range []struct{ name, src, msg string }{
		{"region named twice", mrAPIJob("service", `{"Regions": [{"Name": "east"}, {"Name": "east"}]}`), m + `Regions[1].Name: region "east" is named twice`},
		{"empty name", mrAPIJob("service", `{"Regions": [{"Name": ""}]}`), m + "Regions[0].Name: must not be empty"},
		{"no name", mrAPIJob("service", `{"Regions": [{"Count": 2}]}`), m + "Regions[0].Name: must not be empty"},
		{"negative count", mrAPIJob("service", `{"Regions": [{"Name": "east", "Count": -1}]}`), m + "Regions[0].Count: must not be negative (got -1)"},
		{"negative MaxParallel", mrAPIJob("service", `{"Strategy": {"MaxParallel": -1}, "Regions": [{"Name": "east"}]}`), m + "Strategy.MaxParallel: must not be negative"},
		{"unknown OnFailure", mrAPIJob("service", `{"Strategy": {"OnFailure": "x"}, "Regions": [{"Name": "east"}]}`), m + `Strategy.OnFailure: must be "fail_all", "fail_local" or unset (got "x")`},
		{"Count a string", mrAPIJob("service", `{"Regions": [{"Name": "east", "Count": "2"}]}`), m + "Regions[0].Count: must be a number"},
		{"unknown field", mrAPIJob("service", `{"Regions": [{"Name": "east", "Datacenter": ["a"]}]}`), m + "Regions[0].Datacenter: not a field of a Nomad region (did you mean Datacenters?)"},
		{"Regions an object", mrAPIJob("service", `{"Regions": {"east": {}}}`), m + "Regions: must be an array"},
		{"not an object", mrAPIJob("service", `[]`), "Job.Multiregion: must be an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseAPIJob([]byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want %q", err, c.msg)
			}
		})
	}
}
