package acl

import "strings"

// Variables capabilities, Nomad's names: a namespace rule's
// variables { path "GLOB" { capabilities = [...] } } blocks.
const (
	VariablesCapabilityList    = "list"
	VariablesCapabilityRead    = "read"
	VariablesCapabilityWrite   = "write"
	VariablesCapabilityDestroy = "destroy"
	VariablesCapabilityDeny    = "deny"
)

// Nomad's rules, which the compiled ACL follows:
//
//   - a rule is keyed by its namespace and path together; the rule of a
//     variable is the exact one for its namespace and path, else the
//     closest matching glob (a "*" in the namespace or the path stands for
//     any run of characters; the closest leaves the fewest characters to
//     its "*"s), as namespaces' rules are chosen;
//   - "read" implies "list";
//   - the rules for the same key in several policies add up, and "deny"
//     in any of them denies everything on that key, whatever the others
//     say; a deny on a more general glob does not deny a more specific
//     rule, which is the one chosen;
//   - a namespace's policy ("read", "write") grants no variables: only
//     variables blocks do. A management token may do everything.

// varKey is the key of a variables rule: namespace, NUL, path.
func varKey(ns, path string) string { return ns + "\x00" + path }

// expandVariablesCapabilities applies "read implies list" and "deny
// alone".
func expandVariablesCapabilities(caps []string) []string {
	var read, list bool
	for _, c := range caps {
		switch c {
		case VariablesCapabilityDeny:
			return []string{VariablesCapabilityDeny}
		case VariablesCapabilityRead:
			read = true
		case VariablesCapabilityList:
			list = true
		}
	}
	if read && !list {
		caps = append(caps, VariablesCapabilityList)
	}
	return caps
}

// addVariables compiles a namespace rule's variables paths into a.
func (a *ACL) addVariables(ns *NamespaceRule, globs map[string]capSet) {
	for path, caps := range ns.Variables {
		key := varKey(ns.Name, path)
		target := a.variables
		if strings.Contains(key, "*") {
			target = globs
		}
		set := target[key]
		if set == nil {
			set = capSet{}
			target[key] = set
		}
		for _, c := range expandVariablesCapabilities(caps) {
			set[c] = true
		}
	}
}

// variableCaps returns the capabilities of the rule that governs the
// variable at ns and path.
func (a *ACL) variableCaps(ns, path string) capSet {
	key := varKey(ns, path)
	if caps, ok := a.variables[key]; ok {
		return caps
	}
	return closestGlob(a.varGlobs, key)
}

// AllowVariableOp reports whether the ACL grants capability on the
// variable at ns and path.
func (a *ACL) AllowVariableOp(ns, path, capability string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	caps := a.variableCaps(ns, path)
	if caps[VariablesCapabilityDeny] {
		return false
	}
	return caps[capability]
}

// AllowVariableSearch reports whether the ACL may list variables in
// namespace ns ("*": in some namespace): whether some variables rule of
// that namespace grants list. A list's answer is then filtered with
// AllowVariableOp, variable by variable.
func (a *ACL) AllowVariableSearch(ns string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	check := func(key string, caps capSet) bool {
		if !caps[VariablesCapabilityList] || caps[VariablesCapabilityDeny] {
			return false
		}
		if ns == "*" {
			return true
		}
		rns, _, _ := strings.Cut(key, "\x00")
		return rns == ns || strings.Contains(rns, "*") && globMatch(rns, ns)
	}
	for key, caps := range a.variables {
		if check(key, caps) {
			return true
		}
	}
	for _, g := range a.varGlobs {
		if check(g.pattern, g.caps) {
			return true
		}
	}
	return false
}

// WorkloadPaths are the variables a task may read without any policy, as
// Nomad's: nomad/jobs, and its job's, group's and task's own paths.
func WorkloadPaths(job, group, task string) []string {
	return []string{
		"nomad/jobs",
		"nomad/jobs/" + job,
		"nomad/jobs/" + job + "/" + group,
		"nomad/jobs/" + job + "/" + group + "/" + task,
	}
}

// NewWorkload returns the ACL of a task's workload identity: read and
// list on WorkloadPaths in its namespace, and read-job there (which
// Nomad grants an identity for service discovery); nothing else.
func NewWorkload(ns, job, group, task string) *ACL {
	a := &ACL{
		namespaces: map[string]capSet{ns: {NamespaceCapabilityReadJob: true}},
		variables:  map[string]capSet{},
	}
	for _, p := range WorkloadPaths(job, group, task) {
		a.variables[varKey(ns, p)] = capSet{VariablesCapabilityRead: true, VariablesCapabilityList: true}
	}
	return a
}
