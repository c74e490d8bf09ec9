package acl

import "strings"

// Node pool capabilities, Nomad's names: a policy's
// node_pool "NAME GLOB" { policy; capabilities } blocks.
const (
	NodePoolCapabilityDelete = "delete"
	NodePoolCapabilityDeny   = "deny"
	NodePoolCapabilityRead   = "read"
	NodePoolCapabilityWrite  = "write"
)

// nodePoolCapabilities are the capabilities a node_pool rule may list.
var nodePoolCapabilities = []string{
	NodePoolCapabilityDelete, NodePoolCapabilityDeny, NodePoolCapabilityRead, NodePoolCapabilityWrite,
}

// Nomad's rules, which the compiled ACL follows:
//
//   - the policy shorthands: "read" is read, "write" is read, write and
//     delete, "deny" is deny; a rule's capabilities add to its policy's;
//   - the rule of a pool is the exact one for its name, else the closest
//     matching glob, as namespaces' rules are chosen;
//   - the rules for the same name in several policies add up, and "deny"
//     in any of them denies everything on that pool;
//   - no rule, nothing: listing pools shows those the token may read.
//     A management token may do everything.

// expandNodePoolPolicy returns the capabilities a node_pool policy stands
// for.
func expandNodePoolPolicy(policy string) []string {
	switch policy {
	case PolicyDeny:
		return []string{NodePoolCapabilityDeny}
	case PolicyRead:
		return []string{NodePoolCapabilityRead}
	case PolicyWrite:
		return []string{NodePoolCapabilityDelete, NodePoolCapabilityRead, NodePoolCapabilityWrite}
	}
	return nil
}

// addNodePool compiles one node_pool rule into a (globs: those whose name
// holds a "*").
func (a *ACL) addNodePool(r *NamedRule, globs map[string]capSet) {
	if a.nodePools == nil {
		a.nodePools = map[string]capSet{}
	}
	target := a.nodePools
	if strings.Contains(r.Name, "*") {
		target = globs
	}
	set := target[r.Name]
	if set == nil {
		set = capSet{}
		target[r.Name] = set
	}
	if set[NodePoolCapabilityDeny] {
		return
	}
	for _, c := range append(expandNodePoolPolicy(r.Policy), r.Capabilities...) {
		switch c {
		case NodePoolCapabilityDeny:
			clear(set)
			set[NodePoolCapabilityDeny] = true
			return
		case NodePoolCapabilityDelete, NodePoolCapabilityRead, NodePoolCapabilityWrite:
			set[c] = true
		}
	}
}

// nodePoolCaps returns the capabilities of the rule that governs pool.
func (a *ACL) nodePoolCaps(pool string) capSet {
	if caps, ok := a.nodePools[pool]; ok {
		return caps
	}
	return closestGlob(a.npGlobs, pool)
}

// AllowNodePoolOp reports whether the ACL grants capability on the node
// pool named pool.
func (a *ACL) AllowNodePoolOp(pool, capability string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	caps := a.nodePoolCaps(pool)
	return !caps[NodePoolCapabilityDeny] && caps[capability]
}
