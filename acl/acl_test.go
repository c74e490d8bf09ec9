package acl

import (
	"testing"
)

func mustParse(t *testing.T, name, rules string) *Policy {
	t.Helper()
	p, err := Parse(name, name, rules)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// Each row asks one question of the ACL built from some of the policies.
func TestCapabilities(t *testing.T) {
	pols := map[string]*Policy{
		"read":      mustParse(t, "read", `namespace "default" { policy = "read" }`),
		"write":     mustParse(t, "write", `namespace "default" { policy = "write" }`),
		"scale":     mustParse(t, "scale", `namespace "default" { policy = "scale" }`),
		"caps":      mustParse(t, "caps", `namespace "default" { capabilities = ["submit-job", "read-logs"] }`),
		"deny":      mustParse(t, "deny", `namespace "default" { policy = "deny" }`),
		"denycap":   mustParse(t, "denycap", `namespace "default" { capabilities = ["deny"] }`),
		"any":       mustParse(t, "any", `namespace "*" { policy = "read" }`),
		"prod":      mustParse(t, "prod", "namespace \"*\" { policy = \"write\" }\nnamespace \"prod-*\" { policy = \"read\" }\nnamespace \"prod-db\" { policy = \"deny\" }"),
		"nodeRead":  mustParse(t, "nodeRead", `node { policy = "read" }`),
		"nodeWrite": mustParse(t, "nodeWrite", `node { policy = "write" }`),
		"nodeDeny":  mustParse(t, "nodeDeny", `node { policy = "deny" }`),
		"agent":     mustParse(t, "agent", `agent { policy = "read" }`),
		"operator":  mustParse(t, "operator", `operator { policy = "write" }`),
	}
	acl := func(names ...string) *ACL {
		var ps []*Policy
		for _, n := range names {
			ps = append(ps, pols[n])
		}
		return New(ps)
	}
	ns := func(namespace, capability string) func(*ACL) bool {
		return func(a *ACL) bool { return a.AllowNamespaceOp(namespace, capability) }
	}
	for _, tc := range []struct {
		name string
		acl  *ACL
		ask  func(*ACL) bool
		want bool
	}{
		{"read lists jobs", acl("read"), ns("default", NamespaceCapabilityListJobs), true},
		{"read reads jobs", acl("read"), ns("default", NamespaceCapabilityReadJob), true},
		{"read parses jobs", acl("read"), ns("default", NamespaceCapabilityParseJob), true},
		{"read does not submit", acl("read"), ns("default", NamespaceCapabilitySubmitJob), false},
		{"read does not read logs", acl("read"), ns("default", NamespaceCapabilityReadLogs), false},
		{"read is for its namespace", acl("read"), ns("other", NamespaceCapabilityReadJob), false},
		{"write submits", acl("write"), ns("default", NamespaceCapabilitySubmitJob), true},
		{"write reads logs", acl("write"), ns("default", NamespaceCapabilityReadLogs), true},
		{"write has no node exec", acl("write"), ns("default", NamespaceCapabilityAllocNodeExec), false},
		{"scale scales", acl("scale"), ns("default", NamespaceCapabilityScaleJob), true},
		{"scale does not read jobs", acl("scale"), ns("default", NamespaceCapabilityReadJob), false},
		{"capabilities alone", acl("caps"), ns("default", NamespaceCapabilitySubmitJob), true},
		{"capabilities alone, not more", acl("caps"), ns("default", NamespaceCapabilityReadJob), false},
		{"policies add up", acl("read", "caps"), ns("default", NamespaceCapabilityReadLogs), true},
		{"deny wins over write", acl("write", "deny"), ns("default", NamespaceCapabilityReadJob), false},
		{"deny capability wins", acl("write", "denycap"), ns("default", NamespaceCapabilitySubmitJob), false},
		{"glob", acl("any"), ns("anything", NamespaceCapabilityReadJob), true},
		{"exact beats glob", acl("any", "deny"), ns("default", NamespaceCapabilityReadJob), false},
		{"closest glob: prod-*", acl("prod"), ns("prod-web", NamespaceCapabilitySubmitJob), false},
		{"closest glob: prod-* reads", acl("prod"), ns("prod-web", NamespaceCapabilityReadJob), true},
		{"closest glob: *", acl("prod"), ns("dev", NamespaceCapabilitySubmitJob), true},
		{"exact deny under globs", acl("prod"), ns("prod-db", NamespaceCapabilityReadJob), false},
		{"any namespace", acl("caps"), func(a *ACL) bool { return a.AllowNamespaceOpAny(NamespaceCapabilityReadLogs) }, true},
		{"any namespace, denied", acl("denycap"), func(a *ACL) bool { return a.AllowNamespaceOpAny(NamespaceCapabilityDeny) }, false},
		{"allow namespace", acl("read"), func(a *ACL) bool { return a.AllowNamespace("default") }, true},
		{"allow namespace, denied", acl("deny"), func(a *ACL) bool { return a.AllowNamespace("default") }, false},
		{"no policy", acl(), ns("default", NamespaceCapabilityListJobs), false},
		{"node read", acl("nodeRead"), (*ACL).AllowNodeRead, true},
		{"node read does not write", acl("nodeRead"), (*ACL).AllowNodeWrite, false},
		{"node write reads", acl("nodeWrite"), (*ACL).AllowNodeRead, true},
		{"node deny wins", acl("nodeWrite", "nodeDeny"), (*ACL).AllowNodeRead, false},
		{"agent read", acl("agent"), (*ACL).AllowAgentRead, true},
		{"agent no write", acl("agent"), (*ACL).AllowAgentWrite, false},
		{"operator write", acl("operator"), (*ACL).AllowOperatorWrite, true},
		{"operator is not node", acl("operator"), (*ACL).AllowNodeRead, false},
		{"namespace is not node", acl("write"), (*ACL).AllowNodeRead, false},
		{"management", ManagementACL, ns("any", NamespaceCapabilityAllocNodeExec), true},
		{"management operator", ManagementACL, (*ACL).AllowOperatorWrite, true},
		{"management is", ManagementACL, (*ACL).IsManagement, true},
		{"client is not management", acl("write", "operator", "nodeWrite"), (*ACL).IsManagement, false},
		{"deny all", DenyAll, (*ACL).AllowAgentRead, false},
		{"nil", nil, ns("default", NamespaceCapabilityReadJob), false},
		{"nil node", nil, (*ACL).AllowNodeRead, false},
	} {
		if got := tc.ask(tc.acl); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
	}
}
