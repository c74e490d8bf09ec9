package acl

import "testing"

func mustACL(t *testing.T, rules ...string) *ACL {
	t.Helper()
	var ps []*Policy
	for i, r := range rules {
		p, err := Parse("p", "p", r)
		if err != nil {
			t.Fatalf("policy %d: %v", i, err)
		}
		ps = append(ps, p)
	}
	return New(ps)
}

func TestVariablesRules(t *testing.T) {
	a := mustACL(t, `
namespace "default" {
  policy = "write"
  variables {
    path "app/*"        { capabilities = ["read"] }
    path "app/secret/*" { capabilities = ["deny"] }
    path "app/own"      { capabilities = ["write", "read", "destroy"] }
    path "*"            { capabilities = ["list"] }
  }
}
namespace "prod-*" {
  variables {
    path "shared/*" { capabilities = ["read"] }
  }
}`, `
namespace "default" {
  variables {
    path "app/own" { capabilities = ["deny"] }
    path "app/mine" { capabilities = ["write"] }
  }
}`)
	cases := []struct {
		ns, path, cap string
		want          bool
	}{
		{"default", "app/db", "read", true},
		{"default", "app/db", "list", true}, // read implies list
		{"default", "app/db", "write", false},
		{"default", "app/secret/x", "read", false}, // the closer glob denies
		{"default", "app/own", "read", false},      // deny in another policy wins
		{"default", "app/mine", "write", true},     // exact rule beats the glob
		{"default", "app/mine", "read", false},     // ... and is all that counts
		{"default", "other", "list", true},
		{"default", "other", "read", false},
		{"prod-eu", "shared/a", "read", true},
		{"prod-eu", "app/db", "read", false},
		{"staging", "shared/a", "read", false},
		{"default", "nomad/jobs/web", "read", false}, // a namespace policy grants no variables
	}
	for _, c := range cases {
		if got := a.AllowVariableOp(c.ns, c.path, c.cap); got != c.want {
			t.Errorf("AllowVariableOp(%q, %q, %q) = %v, want %v", c.ns, c.path, c.cap, got, c.want)
		}
	}
	if !a.AllowVariableSearch("default") || !a.AllowVariableSearch("prod-x") || a.AllowVariableSearch("staging") || !a.AllowVariableSearch("*") {
		t.Error("AllowVariableSearch")
	}
	if mustACL(t, `namespace "default" { policy = "read" }`).AllowVariableSearch("*") {
		t.Error("a namespace policy alone lets a token list variables")
	}
	if !ManagementACL.AllowVariableOp("x", "y", "destroy") || DenyAll.AllowVariableOp("default", "a", "read") {
		t.Error("management / deny all")
	}
}

func TestWorkloadACL(t *testing.T) {
	a := NewWorkload("prod", "web", "front", "nginx")
	for _, p := range []string{"nomad/jobs", "nomad/jobs/web", "nomad/jobs/web/front", "nomad/jobs/web/front/nginx"} {
		if !a.AllowVariableOp("prod", p, "read") || !a.AllowVariableOp("prod", p, "list") {
			t.Errorf("workload cannot read its own %s", p)
		}
		if a.AllowVariableOp("prod", p, "write") || a.AllowVariableOp("prod", p, "destroy") {
			t.Errorf("workload may change %s", p)
		}
		if a.AllowVariableOp("default", p, "read") {
			t.Errorf("workload reads %s in another namespace", p)
		}
	}
	for _, p := range []string{"nomad/jobs/api", "nomad/jobs/web/back", "nomad/jobs/web/front/other", "app/db", "nomad/jobs/web/front/nginx/x"} {
		if a.AllowVariableOp("prod", p, "read") {
			t.Errorf("workload reads %s", p)
		}
	}
	if !a.AllowNamespaceOp("prod", NamespaceCapabilityReadJob) || a.AllowNamespaceOp("prod", NamespaceCapabilitySubmitJob) ||
		a.AllowNamespaceOp("default", NamespaceCapabilityReadJob) || a.AllowNodeRead() || a.IsManagement() {
		t.Error("workload's other rights")
	}
}

func TestVariablesPolicyErrors(t *testing.T) {
	for _, rules := range []string{
		`namespace "default" { variables {} }`,
		`namespace "default" { variables { path "/abs" { capabilities = ["read"] } } }`,
		`namespace "default" { variables { path "a" { capabilities = ["reed"] } } }`,
	} {
		if _, err := Parse("p", "p", rules); err == nil {
			t.Errorf("accepted %s", rules)
		}
	}
}
