package acl

import (
	"strings"
	"testing"
)

// TestNodePoolRules: Nomad's node_pool rules — policies expand to
// capabilities, globs and exact names choose the rule, policies add up
// and deny wins.
func TestNodePoolRules(t *testing.T) {
	for _, c := range []struct {
		name              string
		rules             []string
		pool              string
		read, write, drop bool
	}{
		{"no rule", []string{`namespace "dev" { policy = "write" }`}, "gpu", false, false, false},
		{"read", []string{`node_pool "gpu" { policy = "read" }`}, "gpu", true, false, false},
		{"write is read, write and delete", []string{`node_pool "gpu" { policy = "write" }`}, "gpu", true, true, true},
		{"deny", []string{`node_pool "gpu" { policy = "deny" }`}, "gpu", false, false, false},
		{"capabilities", []string{`node_pool "gpu" { capabilities = ["read", "delete"] }`}, "gpu", true, false, true},
		{"another pool", []string{`node_pool "gpu" { policy = "write" }`}, "cpu", false, false, false},
		{"glob", []string{`node_pool "dev-*" { policy = "write" }`}, "dev-1", true, true, true},
		{"the closest glob wins", []string{`node_pool "*" { policy = "write" }` + "\n" + `node_pool "dev-*" { policy = "read" }`}, "dev-1", true, false, false},
		{"the exact rule wins over globs", []string{`node_pool "dev-*" { policy = "deny" }` + "\n" + `node_pool "dev-1" { policy = "write" }`}, "dev-1", true, true, true},
		{"policies add up", []string{`node_pool "gpu" { policy = "read" }`, `node_pool "gpu" { capabilities = ["write"] }`}, "gpu", true, true, false},
		{"deny in any policy wins", []string{`node_pool "gpu" { policy = "write" }`, `node_pool "gpu" { capabilities = ["deny"] }`}, "gpu", false, false, false},
	} {
		a := mustACL(t, c.rules...)
		got := [3]bool{a.AllowNodePoolOp(c.pool, NodePoolCapabilityRead), a.AllowNodePoolOp(c.pool, NodePoolCapabilityWrite), a.AllowNodePoolOp(c.pool, NodePoolCapabilityDelete)}
		if want := [3]bool{c.read, c.write, c.drop}; got != want {
			t.Errorf("%s: read, write, delete = %v, want %v", c.name, got, want)
		}
	}
	if !ManagementACL.AllowNodePoolOp("any", NodePoolCapabilityDelete) || DenyAll.AllowNodePoolOp("any", NodePoolCapabilityRead) {
		t.Error("management or deny-all")
	}
	// A host volume's capabilities are not a node pool's.
	if _, err := Parse("p", "", `node_pool "gpu" { capabilities = ["mount-readonly"] }`); err == nil || !strings.Contains(err.Error(), "mount-readonly") {
		t.Errorf("mount-readonly on a node pool: %v", err)
	}
}
