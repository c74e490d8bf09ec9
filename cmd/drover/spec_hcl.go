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
	return specBody(f.Body.(*hclsyntax.Body), attrs)
}

// parseLabelledHCL reads a specification written as one block of type
// typ with one label (Nomad's node_pool "NAME" { … }): its body as
// parseSimpleHCL reads a flat one, and the label as the Name field.
func parseLabelledHCL(name string, src []byte, typ string, attrs map[string]string) (map[string]any, error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	body := f.Body.(*hclsyntax.Body)
	if len(body.Attributes) > 0 || len(body.Blocks) != 1 || body.Blocks[0].Type != typ {
		return nil, fmt.Errorf("%s: want one %s block", name, typ)
	}
	b := body.Blocks[0]
	if len(b.Labels) != 1 {
		return nil, fmt.Errorf("%s: the %s block needs a name label", b.DefRange(), typ)
	}
	m, err := specBody(b.Body, attrs)
	if err != nil {
		return nil, err
	}
	m["Name"] = b.Labels[0]
	return m, nil
}

// specBody reads the attributes and blocks of a specification's body.
func specBody(body *hclsyntax.Body, attrs map[string]string) (map[string]any, error) {
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
