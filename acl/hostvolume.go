package acl

import "strings"

// Host volume capabilities, Nomad's names: a policy's
// host_volume "NAME GLOB" { policy; capabilities } blocks.
const (
	HostVolumeCapabilityDeny           = "deny"
	HostVolumeCapabilityMountReadOnly  = "mount-readonly"
	HostVolumeCapabilityMountReadWrite = "mount-readwrite"
)

// Nomad's rules, which the compiled ACL follows:
//
//   - the policy shorthands: "read" is mount-readonly, "write" is
//     mount-readonly and mount-readwrite, "deny" is deny; a rule's
//     capabilities add to its policy's;
//   - the rule of a volume is the exact one for its name, else the
//     closest matching glob (the one that leaves the fewest characters
//     to its "*"s), as namespaces' rules are chosen;
//   - the rules for the same name in several policies add up, and "deny"
//     in any of them denies every mount of that name; a deny on a more
//     general glob does not deny a more specific rule, which is the one
//     chosen;
//   - no rule, no mount: a job may use a host volume only with a rule
//     that grants it (Nomad's Job.Register checks each group volume of
//     type host). A management token may mount everything.
//
// A policy that drover parsed before these rules were enforced may say
// policy = "mount", or capabilities "read" or "write": Nomad refuses
// those, and they grant no mount.

// expandHostVolumePolicy returns the capabilities a host_volume policy
// stands for.
func expandHostVolumePolicy(policy string) []string {
	switch policy {
	case PolicyDeny:
		return []string{HostVolumeCapabilityDeny}
	case PolicyRead:
		return []string{HostVolumeCapabilityMountReadOnly}
	case PolicyWrite:
		return []string{HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite}
	}
	return nil
}

// addHostVolume compiles one host_volume rule into a (globs: those whose
// name holds a "*").
func (a *ACL) addHostVolume(r *NamedRule, globs map[string]capSet) {
	target := a.hostVolumes
	if strings.Contains(r.Name, "*") {
		target = globs
	}
	set := target[r.Name]
	if set == nil {
		set = capSet{}
		target[r.Name] = set
	}
	if set[HostVolumeCapabilityDeny] {
		return
	}
	for _, c := range append(expandHostVolumePolicy(r.Policy), r.Capabilities...) {
		switch c {
		case HostVolumeCapabilityDeny:
			clear(set)
			set[HostVolumeCapabilityDeny] = true
			return
		case HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite:
			set[c] = true
		}
	}
}

// AllowHostVolumeOp reports whether the ACL grants capability on the
// host volume named name.
func (a *ACL) AllowHostVolumeOp(name, capability string) bool {
	if a == nil {
		return false
	}
	if a.management {
		return true
	}
	caps, ok := a.hostVolumes[name]
	if !ok {
		caps = closestGlob(a.hvGlobs, name)
	}
	if caps[HostVolumeCapabilityDeny] {
		return false
	}
	return caps[capability]
}

// AllowHostVolumeMount reports whether a job may mount the host volume
// named name, as Nomad's registration decides: a read-only volume
// (the group volume's read_only) needs mount-readonly or mount-readwrite,
// any other mount-readwrite.
func (a *ACL) AllowHostVolumeMount(name string, readOnly bool) bool {
	if readOnly && a.AllowHostVolumeOp(name, HostVolumeCapabilityMountReadOnly) {
		return true
	}
	return a.AllowHostVolumeOp(name, HostVolumeCapabilityMountReadWrite)
}
