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

// Workload is what a workload identity speaks for: its allocation's
// namespace, job (and the job's parent, for a dispatched or periodic
// child), group and task.
type Workload struct {
	Namespace string
	JobID     string
	ParentID  string
	Group     string
	Task      string
}

// WorkloadPaths are the variables a task may read without any policy.
//
// Nomad's rule (acl.ACL.matchingVariablesCapabilitySet) grants an
// identity read and list on exactly four paths of its namespace, compared
// with the requested path as whole strings, nothing below them:
// "nomad/jobs", "nomad/jobs/JOB", "nomad/jobs/JOB/GROUP" and
// "nomad/jobs/JOB/GROUP/TASK", where JOB is the job's ID, or its parent's
// for a dispatched or periodic child (Job.GetIDforWorkloadIdentity).
// Compared as strings, a "/" in a name makes one workload's path
// another's: job "web/g" would read "nomad/jobs/web/g", which is job
// "web"'s group "g".
//
// Drover reads these paths by segment: the segment after "nomad/jobs"
// names the job, the next the group, the next the task. A job whose ID
// holds a "/" therefore owns no path of its own, and its identity gets
// only "nomad/jobs"; a group or task name that holds one gets no path
// of its level. The exception is a dispatched or periodic child, whose ID
// the servers make as "PARENT/SUFFIX" (one segment each): it keeps the
// paths of its own ID, which lie in its parent's, as drover has always
// granted them (Nomad grants such a child its parent's paths instead).
func WorkloadPaths(w Workload) []string {
	paths := []string{"nomad/jobs"}
	if !ownsJobPath(w) {
		return paths
	}
	job := "nomad/jobs/" + w.JobID
	paths = append(paths, job)
	if !oneSegment(w.Group) {
		return paths
	}
	paths = append(paths, job+"/"+w.Group)
	if oneSegment(w.Task) {
		paths = append(paths, job+"/"+w.Group+"/"+w.Task)
	}
	return paths
}

// oneSegment reports whether name is one path segment: not empty, no
// "/", not "." or "..".
func oneSegment(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.Contains(name, "/")
}

// ownsJobPath reports whether "nomad/jobs/" + w.JobID is w's job's own
// path: an ID of one segment, or a child's "PARENT/SUFFIX".
func ownsJobPath(w Workload) bool {
	if oneSegment(w.JobID) {
		return true
	}
	suffix, ok := strings.CutPrefix(w.JobID, w.ParentID+"/")
	return ok && oneSegment(w.ParentID) && oneSegment(suffix)
}

// NewWorkload returns the ACL of a task's workload identity, as Nomad's
// default identity: read and list on WorkloadPaths in its namespace, and
// the service registrations of that namespace (AllowServiceRead, which
// templates' nomadService and nomadServices read); no namespace
// capability, so no job, allocation, deployment or event read.
func NewWorkload(w Workload) *ACL {
	a := &ACL{
		namespaces:  map[string]capSet{},
		variables:   map[string]capSet{},
		hostVolumes: map[string]capSet{},
		workloadNS:  w.Namespace,
	}
	for _, p := range WorkloadPaths(w) {
		a.variables[varKey(w.Namespace, p)] = capSet{VariablesCapabilityRead: true, VariablesCapabilityList: true}
	}
	return a
}

// AllowServiceRead reports whether the ACL may read the service
// registrations of namespace ns: read-job there, or a workload identity
// of ns (Nomad's AllowServiceRegistrationReadList).
func (a *ACL) AllowServiceRead(ns string) bool {
	if a == nil {
		return false
	}
	return a.workloadNS != "" && a.workloadNS == ns || a.AllowNamespaceOp(ns, NamespaceCapabilityReadJob)
}

// AllowServiceReadAny reports whether the ACL may read the service
// registrations of at least one namespace (a list across namespaces,
// filtered with AllowServiceRead).
func (a *ACL) AllowServiceReadAny() bool {
	return a != nil && a.workloadNS != "" || a.AllowNamespaceOpAny(NamespaceCapabilityReadJob)
}
