package main

import (
	"strings"
	"testing"
)

// TestParseNodePoolHCL: Nomad's node pool specification, one labelled
// block, read with the HCL parser (comments, spacing and a brace in a
// string included); anything else is an error that names the file.
func TestParseNodePoolHCL(t *testing.T) {
	m, err := parseNodePoolHCL("pool.hcl", []byte(`# the GPU pool
node_pool "gpu" {
  description = "nodes with {GPUs}"
}
`))
	if err != nil || m.Name != "gpu" || m.Description != "nodes with {GPUs}" {
		t.Fatalf("parse: %v %v", m, err)
	}
	for _, bad := range []string{
		`namespace "x" {}`,
		`node_pool {}`,
		`node_pool "a" {}
node_pool "b" {}`,
		`node_pool "a" { colour = "red" }`,
		`name = "a"`,
	} {
		if _, err := parseNodePoolHCL("pool.hcl", []byte(bad)); err == nil || !strings.Contains(err.Error(), "pool.hcl") {
			t.Errorf("%q: %v, want an error naming the file", bad, err)
		}
	}
}
