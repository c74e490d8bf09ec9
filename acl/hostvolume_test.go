package acl

import "testing"

func TestHostVolumeRules(t *testing.T) {
	const ro, rw = HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite
	for _, c := range []struct {
		name   string
		rules  []string
		volume string
		// mayRO, mayRW: AllowHostVolumeMount for a read-only volume and
		// for a read-write one.
		mayRO, mayRW bool
	}{
		{"no rule", []string{`namespace "dev" { policy = "write" }`}, "x", false, false},
		{"read", []string{`host_volume "x" { policy = "read" }`}, "x", true, false},
		{"write", []string{`host_volume "x" { policy = "write" }`}, "x", true, true},
		{"deny", []string{`host_volume "x" { policy = "deny" }`}, "x", false, false},
		{"mount-readonly", []string{`host_volume "x" { capabilities = ["mount-readonly"] }`}, "x", true, false},
		{"mount-readwrite alone serves a read-only volume", []string{`host_volume "x" { capabilities = ["mount-readwrite"] }`}, "x", true, true},
		{"another volume", []string{`host_volume "x" { policy = "write" }`}, "y", false, false},
		{"glob", []string{`host_volume "data-*" { policy = "write" }`}, "data-1", true, true},
		{"glob that does not match", []string{`host_volume "data-*" { policy = "write" }`}, "cache", false, false},
		{"the closest glob wins", []string{`host_volume "*" { policy = "write" }` + "\n" + `host_volume "data-*" { policy = "read" }`}, "data-1", true, false},
		{"a deny on a wider glob does not deny a closer rule", []string{`host_volume "*" { policy = "deny" }` + "\n" + `host_volume "data-*" { policy = "read" }`}, "data-1", true, false},
		{"the exact rule wins over globs", []string{`host_volume "data-*" { policy = "deny" }` + "\n" + `host_volume "data-1" { policy = "write" }`}, "data-1", true, true},
		{"policies add up", []string{`host_volume "x" { policy = "read" }`, `host_volume "x" { capabilities = ["mount-readwrite"] }`}, "x", true, true},
		{"deny in any policy wins", []string{`host_volume "x" { policy = "write" }`, `host_volume "x" { capabilities = ["deny"] }`}, "x", false, false},
		{"deny before the grant wins too", []string{`host_volume "x" { policy = "deny" }`, `host_volume "x" { policy = "write" }`}, "x", false, false},
		{"deny among capabilities", []string{`host_volume "x" {
  policy = "write"
  capabilities = ["deny"]
}`}, "x", false, false},
		// Not Nomad's: accepted by the parser, grants no mount.
		{"policy mount", []string{`host_volume "x" { policy = "mount" }`}, "x", false, false},
		{"capability write", []string{`host_volume "x" { capabilities = ["read", "write"] }`}, "x", false, false},
		{"a namespace's write grants no volume", []string{`namespace "*" { policy = "write" }`}, "x", false, false},
	} {
		a := mustACL(t, c.rules...)
		if got := a.AllowHostVolumeMount(c.volume, true); got != c.mayRO {
			t.Errorf("%s: read-only mount of %q = %v, want %v", c.name, c.volume, got, c.mayRO)
		}
		if got := a.AllowHostVolumeMount(c.volume, false); got != c.mayRW {
			t.Errorf("%s: read-write mount of %q = %v, want %v", c.name, c.volume, got, c.mayRW)
		}
		if got := a.AllowHostVolumeOp(c.volume, rw); got != c.mayRW {
			t.Errorf("%s: mount-readwrite on %q = %v, want %v", c.name, c.volume, got, c.mayRW)
		}
		if a.AllowHostVolumeOp(c.volume, ro) && !c.mayRO {
			t.Errorf("%s: mount-readonly on %q", c.name, c.volume)
		}
	}
	if !ManagementACL.AllowHostVolumeMount("any", false) || DenyAll.AllowHostVolumeMount("any", true) {
		t.Error("management / deny all")
	}
	var none *ACL
	if none.AllowHostVolumeMount("x", true) {
		t.Error("a nil ACL mounts")
	}
}
