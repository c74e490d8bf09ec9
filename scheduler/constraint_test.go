package scheduler

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

func TestMeetsConstraint(t *testing.T) {
	n := testNode("n1", "ready")
	n.NodeClass = "large"
	n.Attributes["nomad.version"] = "1.7.3"
	n.Attributes["cpu.numcores"] = "8"
	n.Attributes["driver.docker.volumes"] = "a,b,c"
	n.Meta = map[string]string{"rack": "r1"}
	cases := []struct {
		l, op, r string
		want     bool
	}{
		{"${attr.kernel.name}", "=", "linux", true},
		{"${attr.kernel.name}", "=", "windows", false},
		{"${attr.kernel.name}", "!=", "windows", true},
		{"${attr.missing}", "!=", "x", true},
		{"${attr.missing}", "=", "", false},
		{"${meta.rack}", "=", "r1", true},
		{"${node.meta.rack}", "=", "r1", true},
		{"${node.datacenter}", "=", "dc1", true},
		{"${node.class}", "=", "large", true},
		{"${node.unique.name}", "=", "n1", true},
		{"${node.unique.id}", "!=", "n1", false},
		{"${attr.kernel.name}", "regexp", "^lin", true},
		{"${attr.kernel.name}", "regexp", "[", false},
		{"${attr.nomad.version}", "version", ">= 1.2, < 2", true},
		{"${attr.nomad.version}", "version", ">= 1.8", false},
		{"${attr.nomad.version}", "semver", "~> 1.7", true},
		{"${attr.nomad.version}", "version", "garbage", false},
		{"${meta.rack}", "is_set", "", true},
		{"${meta.zone}", "is_set", "", false},
		{"${meta.zone}", "is_not_set", "", true},
		{"${attr.cpu.numcores}", ">", "4", true},
		{"${attr.cpu.numcores}", ">=", "8", true},
		{"${attr.cpu.numcores}", "<", "10", true},
		{"${attr.cpu.numcores}", "<=", "7", false},
		{"${meta.rack}", "<", "r2", true},
		{"${attr.driver.docker.volumes}", "set_contains", "a,c", true},
		{"${attr.driver.docker.volumes}", "set_contains", "a,d", false},
		{"${attr.driver.docker.volumes}", "set_contains_any", "d,c", true},
		{"${attr.driver.docker.volumes}", "set_contains_any", "d,e", false},
		{"${attr.driver.docker.volumes}", "set_contains_all", "c,b", true},
		{"${attr.missing}", "set_contains_any", "a", false},
		{"${meta.rack}", "distinct_property", "", true},
		{"", "distinct_hosts", "true", true},
		{"${attr.kernel.name}", "bogus", "linux", false},
	}
	cache := newConstraintCache()
	for _, c := range cases {
		got := meetsConstraint(&structs.Constraint{LTarget: c.l, Operand: c.op, RTarget: c.r}, n, cache)
		if got != c.want {
			t.Errorf("%s %s %s: got %t, want %t", c.l, c.op, c.r, got, c.want)
		}
		// The cache must not change answers.
		if again := meetsConstraint(&structs.Constraint{LTarget: c.l, Operand: c.op, RTarget: c.r}, n, cache); again != got {
			t.Errorf("%s %s %s: cached answer differs", c.l, c.op, c.r)
		}
	}
}

func TestInPool(t *testing.T) {
	n := testNode("n1", "ready")
	n.Datacenter = "us-east-1a"
	cases := []struct {
		dcs  []string
		pool string
		want bool
	}{
		{nil, "", true},
		{[]string{"*"}, "", true},
		{[]string{"us-east-*"}, "", true},
		{[]string{"us-west-*"}, "", false},
		{[]string{"us-east-1a"}, "default", true},
		{[]string{"us-east-1a"}, "gpu", false},
		{[]string{"us-east-1a"}, "all", true},
	}
	for _, c := range cases {
		j := &structs.Job{Datacenters: c.dcs, NodePool: c.pool}
		if got := inPool(j, n); got != c.want {
			t.Errorf("dcs %v pool %q: got %t", c.dcs, c.pool, got)
		}
	}
}

func TestParsePortSpec(t *testing.T) {
	s := portSet{}
	parsePortSpec("22, 80,8000-8002,bad,9-1", s)
	for _, p := range []int{22, 80, 8000, 8001, 8002} {
		if !s.has(p) {
			t.Errorf("port %d not reserved", p)
		}
	}
	if len(s) != 5 {
		t.Errorf("got %d ports, want 5", len(s))
	}
}
