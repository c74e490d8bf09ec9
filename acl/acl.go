package acl

import (
	"slices"
	"strings"
)

// ACL is what a token may do: the union of its policies, compiled once.
// Denials win: a namespace rule that denies, in any of the policies,
// denies every capability there; a coarse rule that says deny denies
// reads and writes whatever the other policies say. The zero value (and
// nil) allows nothing.
type ACL struct {
	management bool
	// namespaces holds the exact namespace rules, globs those whose name
	// holds a "*".
	namespaces map[string]capSet
	globs      []glob
	node       string
	agent      string
	operator   string
	// variables holds the variables path rules by namespace NUL path,
	// varGlobs those whose namespace or path holds a "*" (variables.go).
	variables map[string]capSet
	varGlobs  []glob
	// hostVolumes holds the host_volume rules by name, hvGlobs those
	// whose name holds a "*" (hostvolume.go).
	hostVolumes map[string]capSet
	hvGlobs     []glob
	// nodePools holds the node_pool rules by name, npGlobs those whose
	// name holds a "*" (nodepool.go).
	nodePools map[string]capSet
	npGlobs   []glob
	// workloadNS is the namespace of a workload identity's ACL
	// (NewWorkload), "" for a token's.
	workloadNS string
}

type capSet map[string]bool

type glob struct {
	pattern string
	caps    capSet
}

// ManagementACL allows everything.
var ManagementACL = &ACL{management: true}

// DenyAll allows nothing.
var DenyAll = &ACL{}

// New compiles the policies of one token.
func New(policies []*Policy) *ACL {
	a := &ACL{namespaces: map[string]capSet{}, variables: map[string]capSet{}, hostVolumes: map[string]capSet{}}
	globs := map[string]capSet{}
	varGlobs := map[string]capSet{}
	hvGlobs := map[string]capSet{}
	npGlobs := map[string]capSet{}
	for _, p := range policies {
		if p == nil {
			continue
		}
		for _, ns := range p.Namespaces {
			target := a.namespaces
			if strings.Contains(ns.Name, "*") {
				target = globs
			}
			set := target[ns.Name]
			if set == nil {
				set = capSet{}
				target[ns.Name] = set
			}
			for _, c := range expandNamespacePolicy(ns.Policy) {
				set[c] = true
			}
			for _, c := range ns.Capabilities {
				set[c] = true
			}
			a.addVariables(ns, varGlobs)
		}
		for _, hv := range p.HostVolumes {
			a.addHostVolume(hv, hvGlobs)
		}
		for _, np := range p.NodePools {
			a.addNodePool(np, npGlobs)
		}
		a.node = maxPrivilege(a.node, coarse(p.Node))
		a.agent = maxPrivilege(a.agent, coarse(p.Agent))
		a.operator = maxPrivilege(a.operator, coarse(p.Operator))
	}
	for pattern, caps := range globs {
		a.globs = append(a.globs, glob{pattern, caps})
	}
	slices.SortFunc(a.globs, func(x, y glob) int { return strings.Compare(x.pattern, y.pattern) })
	for pattern, caps := range varGlobs {
		a.varGlobs = append(a.varGlobs, glob{pattern, caps})
	}
	slices.SortFunc(a.varGlobs, func(x, y glob) int { return strings.Compare(x.pattern, y.pattern) })
	for pattern, caps := range hvGlobs {
		a.hvGlobs = append(a.hvGlobs, glob{pattern, caps})
	}
	slices.SortFunc(a.hvGlobs, func(x, y glob) int { return strings.Compare(x.pattern, y.pattern) })
	for pattern, caps := range npGlobs {
		a.npGlobs = append(a.npGlobs, glob{pattern, caps})
	}
	slices.SortFunc(a.npGlobs, func(x, y glob) int { return strings.Compare(x.pattern, y.pattern) })
	return a
}

func coarse(r *CoarseRule) string {
	if r == nil {
		return ""
	}
	return r.Policy
}

// maxPrivilege merges two coarse policies: deny wins, then write, then
// read, as Nomad's.
func maxPrivilege(a, b string) string {
	switch {
	case a == PolicyDeny || b == PolicyDeny:
		return PolicyDeny
	case a == PolicyWrite || b == PolicyWrite:
		return PolicyWrite
	case a == PolicyRead || b == PolicyRead:
		return PolicyRead
	}
	return ""
}

// IsManagement reports whether the ACL is a management token's.
func (a *ACL) IsManagement() bool { return a != nil && a.management }

// namespaceCaps returns the capabilities of the rule that governs ns: the
// exact rule, else the closest glob (the one that leaves the fewest
// characters to its "*"s, then the first by pattern), as Nomad's.
func (a *ACL) namespaceCaps(ns string) capSet {
	if caps, ok := a.namespaces[ns]; ok {
		return caps
	}
	return closestGlob(a.globs, ns)
}

// closestGlob returns the capabilities of the glob that matches s and
// leaves the fewest characters to its "*"s (then the first by pattern),
// nil when none matches.
func closestGlob(globs []glob, s string) capSet {
	var best capSet
	bestLeft := -1
	for _, g := range globs {
		if !globMatch(g.pattern, s) {
			continue
		}
		left := len(s) - len(strings.ReplaceAll(g.pattern, "*", ""))
		if bestLeft < 0 || left < bestLeft {
			best, bestLeft = g.caps, left
		}
	}
	return best
}

// AllowNamespaceOp reports whether the ACL grants capability in
// namespace ns.
func (a *ACL) AllowNamespaceOp(ns, capability string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	caps := a.namespaceCaps(ns)
	if caps[NamespaceCapabilityDeny] {
		return false
	}
	return caps[capability]
}

// AllowNamespace reports whether the ACL grants anything in ns.
func (a *ACL) AllowNamespace(ns string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	caps := a.namespaceCaps(ns)
	return len(caps) > 0 && !caps[NamespaceCapabilityDeny]
}

// AllowNamespaceOpAny reports whether the ACL grants capability in at
// least one namespace (a list across namespaces, whose answer the caller
// then filters with AllowNamespaceOp).
func (a *ACL) AllowNamespaceOpAny(capability string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	for _, caps := range a.namespaces {
		if caps[capability] && !caps[NamespaceCapabilityDeny] {
			return true
		}
	}
	for _, g := range a.globs {
		if g.caps[capability] && !g.caps[NamespaceCapabilityDeny] {
			return true
		}
	}
	return false
}

func allowRead(p string) bool  { return p == PolicyRead || p == PolicyWrite }
func allowWrite(p string) bool { return p == PolicyWrite }

// AllowNodeRead and the others answer the coarse rules.
func (a *ACL) AllowNodeRead() bool     { return a.IsManagement() || a != nil && allowRead(a.node) }
func (a *ACL) AllowNodeWrite() bool    { return a.IsManagement() || a != nil && allowWrite(a.node) }
func (a *ACL) AllowAgentRead() bool    { return a.IsManagement() || a != nil && allowRead(a.agent) }
func (a *ACL) AllowAgentWrite() bool   { return a.IsManagement() || a != nil && allowWrite(a.agent) }
func (a *ACL) AllowOperatorRead() bool { return a.IsManagement() || a != nil && allowRead(a.operator) }
func (a *ACL) AllowOperatorWrite() bool {
	return a.IsManagement() || a != nil && allowWrite(a.operator)
}

// globMatch reports whether s matches pattern, where "*" stands for any
// run of characters (possibly empty).
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}
