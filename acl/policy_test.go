package acl

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseNomadPolicies(t *testing.T) {
	// The anonymous policy of Nomad's tutorials, node_pool, host_volume,
	// quota, plugin and variables included: it loads unchanged.
	rules := `
namespace "*" {
  policy       = "read"
  capabilities = ["list-jobs", "read-logs"]
  variables {
    path "project/*" {
      capabilities = ["read", "list"]
    }
  }
}
namespace "prod-*" { policy = "deny" }
node_pool "default" { policy = "read" }
host_volume "*" { policy = "mount" }
agent    { policy = "read" }
operator { policy = "read" }
node     { policy = "write" }
quota    { policy = "read" }
plugin   { policy = "list" }
`
	p, err := Parse("anonymous", "anonymous", rules)
	if err != nil {
		t.Fatal(err)
	}
	want := &Policy{
		Name: "anonymous",
		Namespaces: []*NamespaceRule{
			{Name: "*", Policy: "read", Capabilities: []string{"list-jobs", "read-logs"},
				Variables: map[string][]string{"project/*": {"read", "list"}}},
			{Name: "prod-*", Policy: "deny"},
		},
		NodePools:   []*NamedRule{{Name: "default", Policy: "read"}},
		HostVolumes: []*NamedRule{{Name: "*", Policy: "mount"}},
		Node:        &CoarseRule{"write"}, Agent: &CoarseRule{"read"}, Operator: &CoarseRule{"read"},
		Quota: &CoarseRule{"read"}, Plugin: &CoarseRule{"list"},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("parsed\n%#v\nwant\n%#v", p, want)
	}

	// The JSON form says the same.
	js := `{"namespace": {"default": {"policy": "write", "capabilities": ["alloc-node-exec"]}}, "node": {"policy": "read"}}`
	p, err = Parse("j", "j", js)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Namespaces) != 1 || p.Namespaces[0].Policy != "write" || p.Namespaces[0].Capabilities[0] != "alloc-node-exec" || p.Node.Policy != "read" {
		t.Fatalf("JSON policy: %+v", p)
	}
}

// Every mistake is reported where it is, naming the field.
func TestParseErrorsAreLocated(t *testing.T) {
	for _, tc := range []struct {
		name, rules string
		want        []string
	}{
		{"empty", "  \n", []string{"p.hcl: policy rules cannot be empty"}},
		{"syntax", "namespace \"default\" {\n  policy = \n}", []string{"p.hcl:2:"}},
		{"unknown policy", "namespace \"default\" {\n  policy = \"reed\"\n}",
			[]string{`p.hcl:2:12: namespace "default".policy: "reed" is not one of deny, read, write, scale; did you mean "read"?`}},
		{"unknown capability", "namespace \"default\" {\n  capabilities = [\"submit-jobs\", \"read-job\"]\n}",
			[]string{`p.hcl:2:18: namespace "default".capabilities: unknown capability "submit-jobs"; did you mean "submit-job"?`}},
		{"unknown block", "namespce \"default\" {\n  policy = \"read\"\n}",
			[]string{`p.hcl:1:1: Unsupported block type`, `Did you mean "namespace"?`}},
		{"unknown attribute", "node {\n  policy = \"read\"\n  polcy = \"x\"\n}",
			[]string{`p.hcl:3:3: node: Unsupported argument`}},
		{"coarse policy missing", "agent {\n}", []string{`p.hcl:1:7: agent: Missing required argument`}},
		{"coarse scale", "operator { policy = \"scale\" }", []string{`p.hcl:1:21: operator.policy: "scale" is not one of deny, read, write`}},
		{"not a string", "node { policy = 3 }", []string{`p.hcl:1:17: node.policy: must be a string`}},
		{"not a list", "namespace \"x\" { capabilities = \"read-job\" }", []string{`namespace "x".capabilities: must be a list of strings`}},
		{"variables", "namespace \"x\" {\n variables {\n  path \"*\" { capabilities = [\"rm\"] }\n }\n}",
			[]string{`p.hcl:3:29: namespace "x".variables.path "*".capabilities: unknown capability "rm"`}},
		{"duplicate", "node { policy = \"read\" }\nnode { policy = \"write\" }", []string{`p.hcl:2:1: node: given twice (first at line 1)`}},
		{"empty name", "namespace \"\" { policy = \"read\" }", []string{`namespace "": the name must not be empty`}},
		{"variable reference", "node { policy = var.x }", []string{`p.hcl:1:17: node.policy: Variables not allowed`}},
		{"two problems", "node { policy = \"x\" }\nagent { policy = \"y\" }", []string{"p.hcl:1:", "\np.hcl:2:"}},
	} {
		_, err := Parse("p", "p.hcl", tc.rules)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v is not ErrInvalid", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not contain %q", tc.name, err, w)
			}
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true}, {"*", "anything", true}, {"prod-*", "prod-web", true}, {"prod-*", "prod-", true},
		{"prod-*", "dev-web", false}, {"*-web", "prod-web", true}, {"a*b*c", "axxbyyc", true},
		{"a*b*c", "acb", false}, {"ab*ba", "aba", false}, {"default", "default", true}, {"default", "defaults", false},
	} {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %t", tc.pattern, tc.s, got)
		}
	}
}
