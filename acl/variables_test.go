package acl

import (
	"reflect"
	"testing"
)

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
	a := NewWorkload(Workload{Namespace: "prod", JobID: "web", Group: "front", Task: "nginx"})
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
	for _, p := range []string{"nomad/jobs/api", "nomad/jobs/web/back", "nomad/jobs/web/front/other", "app/db", "nomad/jobs/web/front/nginx/x", "nomad/jobs/webx", "nomad/jobs/web/frontx"} {
		if a.AllowVariableOp("prod", p, "read") {
			t.Errorf("workload reads %s", p)
		}
	}
	// Nomad's default identity reads its namespace's services, and no
	// job, allocation or event: no namespace capability at all.
	for _, c := range namespaceCapabilities {
		if a.AllowNamespaceOp("prod", c) {
			t.Errorf("workload has %s in its namespace", c)
		}
	}
	if a.AllowNamespace("prod") || a.AllowNamespaceOpAny(NamespaceCapabilityReadJob) || a.AllowNodeRead() || a.IsManagement() {
		t.Error("workload's other rights")
	}
	if !a.AllowServiceRead("prod") || a.AllowServiceRead("default") || !a.AllowServiceReadAny() {
		t.Error("workload's service reads")
	}
	if a.AllowHostVolumeOp("data", HostVolumeCapabilityMountReadOnly) {
		t.Error("workload mounts host volumes")
	}
	// A token's service reads follow read-job.
	r := mustACL(t, `namespace "prod" { policy = "read" }`)
	if !r.AllowServiceRead("prod") || r.AllowServiceRead("dev") || !r.AllowServiceReadAny() || DenyAll.AllowServiceReadAny() {
		t.Error("a token's service reads")
	}
}

// The workload paths by segment: a name holding a "/" does not reach
// into another workload's paths, but a dispatched or periodic child keeps
// the paths of its own ID.
func TestWorkloadPathsBySegment(t *testing.T) {
	for _, c := range []struct {
		name  string
		w     Workload
		paths []string
	}{
		{"plain", Workload{JobID: "web", Group: "g", Task: "t"},
			[]string{"nomad/jobs", "nomad/jobs/web", "nomad/jobs/web/g", "nomad/jobs/web/g/t"}},
		// Compared as strings (Nomad), job "web/g" reads job web's group g.
		{"job with a slash", Workload{JobID: "web/g", Group: "x", Task: "t"}, []string{"nomad/jobs"}},
		{"job with a slash, a parent it is not the child of", Workload{JobID: "web/g", ParentID: "api", Group: "x", Task: "t"}, []string{"nomad/jobs"}},
		{"grandchild", Workload{JobID: "web/a/b", ParentID: "web/a", Group: "g", Task: "t"}, []string{"nomad/jobs"}},
		{"child of two segments", Workload{JobID: "web/a/b", ParentID: "web", Group: "g", Task: "t"}, []string{"nomad/jobs"}},
		{"dispatched child", Workload{JobID: "batch/dispatch-1767323045-0a1b2c3d", ParentID: "batch", Group: "g", Task: "t"},
			[]string{"nomad/jobs", "nomad/jobs/batch/dispatch-1767323045-0a1b2c3d",
				"nomad/jobs/batch/dispatch-1767323045-0a1b2c3d/g", "nomad/jobs/batch/dispatch-1767323045-0a1b2c3d/g/t"}},
		{"periodic child", Workload{JobID: "cron/periodic-1767323045", ParentID: "cron", Group: "g", Task: "t"},
			[]string{"nomad/jobs", "nomad/jobs/cron/periodic-1767323045", "nomad/jobs/cron/periodic-1767323045/g", "nomad/jobs/cron/periodic-1767323045/g/t"}},
		{"group with a slash", Workload{JobID: "web", Group: "g/t", Task: "x"}, []string{"nomad/jobs", "nomad/jobs/web"}},
		{"task with a slash", Workload{JobID: "web", Group: "g", Task: "t/x"}, []string{"nomad/jobs", "nomad/jobs/web", "nomad/jobs/web/g"}},
		{"dot segments", Workload{JobID: "..", Group: "g", Task: "t"}, []string{"nomad/jobs"}},
	} {
		got := WorkloadPaths(c.w)
		if !reflect.DeepEqual(got, c.paths) {
			t.Errorf("%s: WorkloadPaths(%+v) = %q, want %q", c.name, c.w, got, c.paths)
		}
	}
	// Job "web/g"'s identity does not read job web's group g variables.
	a := NewWorkload(Workload{Namespace: "default", JobID: "web/g", Group: "x", Task: "t"})
	for _, p := range []string{"nomad/jobs/web/g", "nomad/jobs/web/g/x", "nomad/jobs/web/g/x/t", "nomad/jobs/web"} {
		if a.AllowVariableOp("default", p, VariablesCapabilityRead) {
			t.Errorf("job web/g's identity reads %s", p)
		}
	}
	if !a.AllowVariableOp("default", "nomad/jobs", VariablesCapabilityList) {
		t.Error("job web/g's identity cannot list nomad/jobs")
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
