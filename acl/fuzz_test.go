package acl

import (
	"errors"
	"testing"
)

// FuzzParse: no rules panic; bad rules are an *Errors with at least one
// located diagnostic; good rules compile into an ACL that answers.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`namespace "default" { policy = "read" }`,
		"namespace \"*\" {\n  policy = \"write\"\n  capabilities = [\"alloc-node-exec\"]\n}\nnode { policy = \"read\" }\nagent { policy = \"read\" }\noperator { policy = \"write\" }",
		"namespace \"x\" {\n variables {\n  path \"a/*\" { capabilities = [\"read\", \"list\"] }\n }\n}",
		"node_pool \"p\" { policy = \"write\" }\nhost_volume \"*\" { policy = \"mount\" capabilities = [\"mount-readonly\"] }",
		`{"namespace": {"default": {"policy": "read"}}, "node": {"policy": "read"}}`,
		`{"namespace": [{"a": {"policy": 1}}]}`,
		"namespace \"default\" { policy = \"reed\" }",
		"node { policy = var.x }",
		"node { policy = [\"read\"] }\nnode {}",
		"namespace { policy = \"read\" }",
		"namespace \"a\" \"b\" { }",
		"quota { policy = null }\nplugin { policy = \"list\" }",
		"namespace \"x\" { capabilities = [null, 1, \"deny\"] }",
		"${",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		p, err := Parse("fuzz", "fuzz.hcl", rules)
		if err != nil {
			var es *Errors
			if !errors.As(err, &es) || len(es.Diagnostics) == 0 || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not a non-empty *Errors", err)
			}
			return
		}
		a := New([]*Policy{p})
		_ = a.AllowNamespaceOp("default", NamespaceCapabilitySubmitJob)
		_ = a.AllowNamespaceOpAny(NamespaceCapabilityReadJob)
		_ = a.AllowNodeWrite()
	})
}
