package jobspec

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// affinityJob writes one affinity block, its body given, at the job level
// (line 2), and maybe another in the group (line 9) and the task (line 15).
const affinityJob = `job "j" {
  affinity {
    attribute = "${meta.rack}"
    value     = "r1"
    weight    = 80
  }
  group "g" {
    count = 3
    affinity {
      attribute = "${node.class}"
      operator  = "regexp"
      value     = "^large"
    }
    task "t" {
      affinity {
        attribute = "${attr.kernel.version}"
        operator  = "version"
        value     = ">= 5.10"
        weight    = -40
      }
      driver = "mock"
    }
  }
}
`

// TestAffinityParse: affinity blocks in the job, a group and a task, with
// Nomad's defaults (operator "=", weight 50), and the same job through
// API JSON under Nomad's field names.
func TestAffinityParse(t *testing.T) {
	job, warns, err := Parse("a.hcl", []byte(affinityJob), Options{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("parse: %v %v", err, warns)
	}
	want := []*structs.Affinity{{LTarget: "${meta.rack}", RTarget: "r1", Operand: "=", Weight: 80}}
	if !reflect.DeepEqual(job.Affinities, want) {
		t.Errorf("job affinities %s", jsonOf(job.Affinities))
	}
	want = []*structs.Affinity{{LTarget: "${node.class}", RTarget: "^large", Operand: "regexp", Weight: 50}}
	if !reflect.DeepEqual(job.TaskGroups[0].Affinities, want) {
		t.Errorf("group affinities %s", jsonOf(job.TaskGroups[0].Affinities))
	}
	want = []*structs.Affinity{{LTarget: "${attr.kernel.version}", RTarget: ">= 5.10", Operand: "version", Weight: -40}}
	if !reflect.DeepEqual(job.TaskGroups[0].Tasks[0].Affinities, want) {
		t.Errorf("task affinities %s", jsonOf(job.TaskGroups[0].Tasks[0].Affinities))
	}
	data, _ := json.Marshal(job)
	if !strings.Contains(string(data), `"Affinities":[{"LTarget":"${meta.rack}","RTarget":"r1","Operand":"=","Weight":80}]`) {
		t.Errorf("API JSON does not carry Nomad's affinity fields: %s", data)
	}

	// As Nomad's Go client sends it: Weight null for the default.
	api := `{"ID":"x","Affinities":[{"LTarget":"${meta.rack}","RTarget":"r1","Operand":"==","Weight":null}],` +
		`"TaskGroups":[{"Name":"g","Affinities":null,"Tasks":[{"Name":"t","Driver":"mock",` +
		`"Affinities":[{"LTarget":"${node.datacenter}","RTarget":"dc1,dc2","Operand":"set_contains_any","Weight":-100}]}]}]}`
	aj, _, err := ParseAPIJob([]byte(api))
	if err != nil {
		t.Fatal(err)
	}
	if got := aj.Affinities; len(got) != 1 || *got[0] != (structs.Affinity{LTarget: "${meta.rack}", RTarget: "r1", Operand: "=", Weight: 50}) {
		t.Errorf("API job affinities %s", jsonOf(got))
	}
	if got := aj.TaskGroups[0].Tasks[0].Affinities; len(got) != 1 || got[0].Operand != "set_contains_any" || got[0].Weight != -100 {
		t.Errorf("API task affinities %s", jsonOf(got))
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAffinityRules: every bad affinity is an error at its line, naming
// the field, in a job file.
func TestAffinityRules(t *testing.T) {
	aff := func(body string) string { return jobWith("  affinity {\n"+body+"\n  }", "") }
	for _, c := range []rule{
		{"weight 0", aff("    attribute = \"${meta.rack}\"\n    value = \"r1\"\n    weight = 0"), "affinity.weight", 5, "affinity.weight must not be 0", false},
		{"weight above 100", aff("    attribute = \"${meta.rack}\"\n    value = \"r1\"\n    weight = 101"), "affinity.weight", 5, "affinity.weight must be between -100 and 100 (got 101)", false},
		{"weight below -100", aff("    attribute = \"${meta.rack}\"\n    value = \"r1\"\n    weight = -300"), "affinity.weight", 5, "affinity.weight must be between -100 and 100 (got -300)", false},
		{"weight not a number", aff("    attribute = \"${meta.rack}\"\n    value = \"r1\"\n    weight = \"high\""), "affinity.weight", 5, "affinity.weight must be number", false},
		{"unknown operator", aff("    attribute = \"${meta.rack}\"\n    operator = \"~\"\n    value = \"r1\""), "affinity.operator", 4, `unknown operator "~"`, false},
		{"is_set is a constraint's", aff("    attribute = \"${meta.rack}\"\n    operator = \"is_set\"\n    value = \"x\""), "affinity.operator", 4, `unknown operator "is_set"`, false},
		{"no attribute", aff("    value = \"r1\""), "affinity", 2, "affinity needs an attribute", false},
		{"no value", aff("    attribute = \"${meta.rack}\""), "affinity", 2, `affinity needs a value for operator "="`, false},
		{"bad regexp", aff("    attribute = \"${node.class}\"\n    operator = \"regexp\"\n    value = \"(\""), "affinity.value", 5, "is not a valid regular expression", false},
		{"bad version", aff("    attribute = \"${attr.kernel.version}\"\n    operator = \"version\"\n    value = \">>1\""), "affinity.value", 5, "is not a valid version constraint", false},
		{"unknown attribute", aff("    attribute = \"${meta.rack}\"\n    value = \"r1\"\n    weigth = 10"), "affinity.weigth", 5, `unknown attribute "weigth" in affinity (did you mean weight?)`, false},
		{"system job", jobWith("  type = \"system\"\n  affinity {\n    attribute = \"${meta.rack}\"\n    value = \"r1\"\n  }", ""), "affinity", 3, "affinity is not allowed for system jobs", false},
		{"sysbatch group", jobWith("  type = \"sysbatch\"", "    affinity {\n      attribute = \"${meta.rack}\"\n      value = \"r1\"\n    }"), "affinity", 4, "affinity is not allowed for sysbatch jobs", false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "a.hcl", c) })
	}
}

// TestAffinityAPIErrors: in API JSON, errors name the JSON path.
func TestAffinityAPIErrors(t *testing.T) {
	job := func(aff string) string {
		return `{"ID":"x","TaskGroups":[{"Name":"g","Affinities":[` + aff + `],"Tasks":[{"Name":"t","Driver":"mock"}]}]}`
	}
	for _, c := range []struct{ aff, want string }{
		{`{"LTarget":"${meta.rack}","RTarget":"r1","Operand":"=","Weight":0}`, "Job.TaskGroups[0].Affinities[0].Weight: must not be 0"},
		{`{"LTarget":"${meta.rack}","RTarget":"r1","Operand":"=","Weight":120}`, "Job.TaskGroups[0].Affinities[0].Weight: must be between -100 and 100 (got 120)"},
		{`{"LTarget":"${meta.rack}","RTarget":"r1","Operand":"=","Weight":1000}`, "Job.TaskGroups[0].Affinities[0].Weight: out of range (got 1000)"},
		{`{"LTarget":"${meta.rack}","RTarget":"r1","Operand":"like","Weight":10}`, `Job.TaskGroups[0].Affinities[0].Operand: unknown operator "like"`},
		{`{"Attribute":"${meta.rack}"}`, `Job.TaskGroups[0].Affinities[0].Attribute: not a field of a Nomad affinity`},
		{`null`, "Job.TaskGroups[0].Affinities[0]: must not be null"},
	} {
		_, _, err := ParseAPIJob([]byte(job(c.aff)))
		var errs *Errors
		if !errors.As(err, &errs) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want an error %q, got %v", c.aff, c.want, err)
		}
	}
}
