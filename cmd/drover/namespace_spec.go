package main

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// parseNamespaceHCL reads Nomad's HCL namespace specification:
//
//	name        = "api-prod"
//	description = "…"
//	quota       = "…"
//	capabilities {
//	  enabled_task_drivers   = ["docker", "exec"]
//	  disabled_task_drivers  = ["raw_exec"]
//	  enabled_network_modes  = ["bridge"]
//	  disabled_network_modes = ["host"]
//	}
//	node_pool_config { default = "prod"  allowed = ["all"]  denied = [] }
//	vault  { default = "…"  allowed = […]  denied = […] }
//	consul { default = "…"  allowed = […]  denied = […] }
//	meta { owner = "…" }
//	required_extra_claims { … }
//	optional_extra_claims { … }
//
// A map's values may be strings, numbers or booleans (kept as text, as
// Nomad's weak decoding does). An attribute or block the specification
// does not have is an error naming it and where it is.
func parseNamespaceHCL(name string, src []byte) (*httpapi.Namespace, error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	body := f.Body.(*hclsyntax.Body)
	ns := &httpapi.Namespace{}
	for n, a := range body.Attributes {
		p, ok := map[string]*string{"name": &ns.Name, "description": &ns.Description, "quota": &ns.Quota}[n]
		if !ok {
			return nil, fmt.Errorf("%s: unknown attribute %q", a.SrcRange, n)
		}
		s, err := nsSpecString(a)
		if err != nil {
			return nil, err
		}
		*p = s
	}
	for _, b := range body.Blocks {
		if len(b.Labels) > 0 {
			return nil, fmt.Errorf("%s: block %q takes no label", b.DefRange(), b.Type)
		}
		var err error
		switch b.Type {
		case "capabilities":
			ns.Capabilities = &structs.NamespaceCapabilities{}
			err = nsSpecLists(b, map[string]*[]string{
				"enabled_task_drivers": &ns.Capabilities.EnabledTaskDrivers, "disabled_task_drivers": &ns.Capabilities.DisabledTaskDrivers,
				"enabled_network_modes": &ns.Capabilities.EnabledNetworkModes, "disabled_network_modes": &ns.Capabilities.DisabledNetworkModes,
			}, nil)
		case "node_pool_config":
			c := &structs.NamespaceNodePoolConfiguration{}
			ns.NodePoolConfiguration = c
			err = nsSpecLists(b, map[string]*[]string{"allowed": &c.Allowed, "denied": &c.Denied}, map[string]*string{"default": &c.Default})
		case "vault":
			c := &structs.NamespaceVaultConfiguration{}
			ns.VaultConfiguration = c
			err = nsSpecLists(b, map[string]*[]string{"allowed": &c.Allowed, "denied": &c.Denied}, map[string]*string{"default": &c.Default})
		case "consul":
			c := &structs.NamespaceConsulConfiguration{}
			ns.ConsulConfiguration = c
			err = nsSpecLists(b, map[string]*[]string{"allowed": &c.Allowed, "denied": &c.Denied}, map[string]*string{"default": &c.Default})
		case "meta":
			ns.Meta, err = nsSpecMap(b)
		case "required_extra_claims":
			ns.RequiredExtraClaims, err = nsSpecMap(b)
		case "optional_extra_claims":
			ns.OptionalExtraClaims, err = nsSpecMap(b)
		default:
			err = fmt.Errorf("%s: unknown block %q", b.DefRange(), b.Type)
		}
		if err != nil {
			return nil, err
		}
	}
	return ns, nil
}

// nsSpecString is a's value, which must be a string.
func nsSpecString(a *hclsyntax.Attribute) (string, error) {
	v, d := a.Expr.Value(nil)
	if d.HasErrors() {
		return "", d
	}
	if v.IsNull() || v.Type() != cty.String {
		return "", fmt.Errorf("%s: %s must be a string", a.SrcRange, a.Name)
	}
	return v.AsString(), nil
}

// nsSpecLists reads block b's attributes: lists of strings into lists,
// strings into strs.
func nsSpecLists(b *hclsyntax.Block, lists map[string]*[]string, strs map[string]*string) error {
	if len(b.Body.Blocks) > 0 {
		return fmt.Errorf("%s: block %q in %s is not allowed", b.Body.Blocks[0].DefRange(), b.Body.Blocks[0].Type, b.Type)
	}
	for n, a := range b.Body.Attributes {
		if p, ok := strs[n]; ok {
			s, err := nsSpecString(a)
			if err != nil {
				return err
			}
			*p = s
			continue
		}
		p, ok := lists[n]
		if !ok {
			return fmt.Errorf("%s: unknown attribute %q in %s", a.SrcRange, n, b.Type)
		}
		v, d := a.Expr.Value(nil)
		if d.HasErrors() {
			return d
		}
		if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
			return fmt.Errorf("%s: %s.%s must be a list of strings", a.SrcRange, b.Type, n)
		}
		out := []string{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.IsNull() || e.Type() != cty.String {
				return fmt.Errorf("%s: %s.%s must be a list of strings", a.SrcRange, b.Type, n)
			}
			out = append(out, e.AsString())
		}
		*p = out
	}
	return nil
}

// nsSpecMap reads block b's attributes as a map of text.
func nsSpecMap(b *hclsyntax.Block) (map[string]string, error) {
	if len(b.Body.Blocks) > 0 {
		return nil, fmt.Errorf("%s: block %q in %s is not allowed", b.Body.Blocks[0].DefRange(), b.Body.Blocks[0].Type, b.Type)
	}
	m := map[string]string{}
	for n, a := range b.Body.Attributes {
		v, d := a.Expr.Value(nil)
		if d.HasErrors() {
			return nil, d
		}
		switch {
		case v.IsNull():
			return nil, fmt.Errorf("%s: %s.%s is null", a.SrcRange, b.Type, n)
		case v.Type() == cty.String:
			m[n] = v.AsString()
		case v.Type() == cty.Number:
			m[n] = v.AsBigFloat().Text('f', -1)
		case v.Type() == cty.Bool:
			m[n] = fmt.Sprint(v.True())
		default:
			return nil, fmt.Errorf("%s: %s.%s must be a string, a number or a boolean", a.SrcRange, b.Type, n)
		}
	}
	return m, nil
}
