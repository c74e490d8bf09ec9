package main

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// specBlocks are the blocks of Nomad's namespace and node pool
// specifications, by their JSON field names.
var specBlocks = map[string]string{
	"meta": "Meta", "capabilities": "Capabilities", "node_pool_config": "NodePoolConfiguration",
	"vault": "VaultConfiguration", "consul": "ConsulConfiguration", "scheduler_config": "SchedulerConfiguration",
}

// parseSimpleHCL reads a flat HCL specification (a namespace's or a node
// pool's): its string attributes named in attrs, by their JSON names; a
// block it names in specBlocks is kept by its JSON name with its
// attributes, so that the server can refuse what drover does not store.
func parseSimpleHCL(name string, src []byte, attrs map[string]string) (map[string]any, error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	body := f.Body.(*hclsyntax.Body)
	out := map[string]any{}
	for n, a := range body.Attributes {
		field, ok := attrs[n]
		if !ok {
			return nil, fmt.Errorf("%s: unknown attribute %q", a.SrcRange, n)
		}
		v, d := a.Expr.Value(nil)
		if d.HasErrors() {
			return nil, d
		}
		if v.Type() != cty.String {
			return nil, fmt.Errorf("%s: %s must be a string", a.SrcRange, n)
		}
		out[field] = v.AsString()
	}
	for _, b := range body.Blocks {
		field, ok := specBlocks[b.Type]
		if !ok {
			return nil, fmt.Errorf("%s: unknown block %q", b.DefRange(), b.Type)
		}
		m := map[string]any{}
		for n, a := range b.Body.Attributes {
			v, d := a.Expr.Value(nil)
			if d.HasErrors() {
				return nil, d
			}
			m[n] = strings.TrimSpace(v.GoString())
		}
		if len(m) == 0 {
			m["block"] = b.Type
		}
		out[field] = m
	}
	return out, nil
}
