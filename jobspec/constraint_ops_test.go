package jobspec

import (
	"encoding/json"
	"fmt"
	"testing"
)

// Every constraint operator of Nomad, written as Nomad's documentation
// writes it, and the API JSON of its canonical parse.
func TestConstraintOperators(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`attribute = "${attr.kernel.name}"
      value     = "linux"`, `{"LTarget":"${attr.kernel.name}","RTarget":"linux","Operand":"="}`},
		{`attribute = "${attr.kernel.name}"
      operator  = "=="
      value     = "linux"`, `{"LTarget":"${attr.kernel.name}","RTarget":"linux","Operand":"="}`},
		{`attribute = "${attr.kernel.name}"
      operator  = "is"
      value     = "linux"`, `{"LTarget":"${attr.kernel.name}","RTarget":"linux","Operand":"="}`},
		{`attribute = "${node.class}"
      operator  = "!="
      value     = "gpu"`, `{"LTarget":"${node.class}","RTarget":"gpu","Operand":"!="}`},
		{`attribute = "${attr.cpu.numcores}"
      operator  = ">"
      value     = "4"`, `{"LTarget":"${attr.cpu.numcores}","RTarget":"4","Operand":"\u003e"}`},
		{`attribute = "${attr.cpu.numcores}"
      operator  = ">="
      value     = "4"`, `{"LTarget":"${attr.cpu.numcores}","RTarget":"4","Operand":"\u003e="}`},
		{`attribute = "${attr.cpu.numcores}"
      operator  = "<"
      value     = "4"`, `{"LTarget":"${attr.cpu.numcores}","RTarget":"4","Operand":"\u003c"}`},
		{`attribute = "${attr.cpu.numcores}"
      operator  = "<="
      value     = "4"`, `{"LTarget":"${attr.cpu.numcores}","RTarget":"4","Operand":"\u003c="}`},
		{`attribute = "${attr.kernel.version}"
      regexp    = "^5\\."`, `{"LTarget":"${attr.kernel.version}","RTarget":"^5\\.","Operand":"regexp"}`},
		{`attribute = "${attr.nomad.version}"
      version   = ">= 1.2, < 2"`, `{"LTarget":"${attr.nomad.version}","RTarget":"\u003e= 1.2, \u003c 2","Operand":"version"}`},
		{`attribute = "${attr.nomad.version}"
      semver    = "~> 1.7"`, `{"LTarget":"${attr.nomad.version}","RTarget":"~\u003e 1.7","Operand":"semver"}`},
		{`attribute    = "${meta.tags}"
      set_contains = "a,b"`, `{"LTarget":"${meta.tags}","RTarget":"a,b","Operand":"set_contains"}`},
		{`attribute        = "${meta.tags}"
      set_contains_all = "a,b"`, `{"LTarget":"${meta.tags}","RTarget":"a,b","Operand":"set_contains"}`},
		{`attribute        = "${meta.tags}"
      set_contains_any = "a,b"`, `{"LTarget":"${meta.tags}","RTarget":"a,b","Operand":"set_contains_any"}`},
		{`attribute = "${meta.tags}"
      operator  = "set_contains_any"
      value     = "a"`, `{"LTarget":"${meta.tags}","RTarget":"a","Operand":"set_contains_any"}`},
		{`attribute = "${meta.rack}"
      operator  = "is_set"`, `{"LTarget":"${meta.rack}","RTarget":"","Operand":"is_set"}`},
		{`attribute = "${meta.rack}"
      operator  = "is_not_set"`, `{"LTarget":"${meta.rack}","RTarget":"","Operand":"is_not_set"}`},
		{`distinct_hosts = true`, `{"LTarget":"","RTarget":"","Operand":"distinct_hosts"}`},
		{`operator = "distinct_hosts"`, `{"LTarget":"","RTarget":"","Operand":"distinct_hosts"}`},
		{`distinct_property = "${meta.rack}"`, `{"LTarget":"${meta.rack}","RTarget":"","Operand":"distinct_property"}`},
		{`distinct_property = "${meta.rack}"
      value             = "3"`, `{"LTarget":"${meta.rack}","RTarget":"3","Operand":"distinct_property"}`},
		{`operator  = "distinct_property"
      attribute = "${meta.rack}"
      value     = "2"`, `{"LTarget":"${meta.rack}","RTarget":"2","Operand":"distinct_property"}`},
	} {
		src := fmt.Sprintf("job \"j\" {\n  group \"g\" {\n    constraint {\n      %s\n    }\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n}\n", c.body)
		job, _, err := Parse("c.hcl", []byte(src), Options{})
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		got, _ := json.Marshal(job.TaskGroups[0].Constraints[0])
		if string(got) != c.want {
			t.Errorf("%s:\ngot  %s\nwant %s", c.body, got, c.want)
		}
		// The API form parses to the same constraint.
		data, _ := json.Marshal(job)
		back, _, err := ParseAPIJob(data)
		if err != nil {
			t.Errorf("%s: round trip: %v", c.body, err)
			continue
		}
		if again, _ := json.Marshal(back.TaskGroups[0].Constraints[0]); string(again) != c.want {
			t.Errorf("%s: round trip %s", c.body, again)
		}
	}
}

func TestConstraintOperatorErrors(t *testing.T) {
	for _, c := range []rule{
		{"distinct_property without a property", jobWith("", "    constraint {\n      operator = \"distinct_property\"\n    }"), "", 4, "distinct_property needs the property", false},
		{"distinct_property limit", jobWith("", "    constraint {\n      distinct_property = \"${meta.rack}\"\n      value = \"zero\"\n    }"), "", 6, "a positive whole number (got \"zero\")", false},
		{"unknown operator", jobWith("", "    constraint {\n      attribute = \"${meta.a}\"\n      operator = \"~\"\n      value = \"x\"\n    }"), "", 6, `unknown operator "~"`, false},
	} {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
}
