package config

import (
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Some of Nomad's integrations that drover does not have are written, in
// configurations made for Nomad, as blocks that leave them off or only
// say where they would be: the suites and templates that start agents
// write "vault": {"enabled": false}, and a consul block holding Consul's
// address. Such a block changes nothing drover would do, so it is
// accepted with a warning; one that turns the integration on (or sets
// anything else) is refused as before.

// inertRule says which settings of a block leave its integration off.
type inertRule struct {
	// off are settings that must be false when written (or, for vault's
	// enabled, may be absent: Nomad's Vault integration is off unless
	// enabled).
	off map[string]bool
	// any are settings whatever their value: where the service is and
	// how to reach it.
	any map[string]bool
}

var inertBlocks = map[string]inertRule{
	"vault": {off: map[string]bool{"enabled": true}, any: map[string]bool{
		"name": true, "address": true, "token": true, "role": true, "namespace": true, "ca_file": true, "ca_path": true,
		"cert_file": true, "key_file": true, "tls_server_name": true, "tls_skip_verify": true,
		"create_from_role": true, "jwt_auth_backend_path": true, "task_token_ttl": true,
	}},
	"consul": {
		off: map[string]bool{"auto_advertise": true, "server_auto_join": true, "client_auto_join": true, "checks_use_advertise": true},
		any: map[string]bool{
			"name": true, "address": true, "grpc_address": true, "auth": true, "token": true, "ssl": true, "verify_ssl": true,
			"ca_file": true, "cert_file": true, "key_file": true, "grpc_ca_file": true, "share_ssl": true, "namespace": true,
			"timeout": true,
		},
	},
}

// inert reports whether the block it (at path) leaves its integration
// off, by inertBlocks. A JSON file writes the block as an object (or a
// list of objects); every one of them must be inert.
func (d *decoder) inert(it item, path string) bool {
	rule, ok := inertBlocks[path]
	if !ok {
		return false
	}
	if it.block != nil {
		body, ok := it.block.Body.(*hclsyntax.Body)
		if !ok || len(body.Blocks) > 0 || len(it.block.Labels) > 0 {
			return false
		}
		vals := map[string]cty.Value{}
		for name, a := range body.Attributes {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				return false
			}
			vals[name] = v
		}
		return rule.inert(vals)
	}
	if it.attr == nil {
		return false
	}
	v, diags := it.attr.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() {
		return false
	}
	var objs []cty.Value
	switch t := v.Type(); {
	case t.IsObjectType() || t.IsMapType():
		objs = []cty.Value{v}
	case t.IsTupleType() || t.IsListType():
		objs = v.AsValueSlice()
	default:
		return false
	}
	for _, o := range objs {
		if o.IsNull() || !(o.Type().IsObjectType() || o.Type().IsMapType()) {
			return false
		}
		if !rule.inert(o.AsValueMap()) {
			return false
		}
	}
	return true
}

func (r inertRule) inert(vals map[string]cty.Value) bool {
	for name, v := range vals {
		switch {
		case r.any[name]:
			if !v.IsKnown() || (!v.IsNull() && !v.Type().IsPrimitiveType()) {
				return false
			}
		case r.off[name]:
			if v.IsNull() || !v.IsKnown() || !v.Type().Equals(cty.Bool) || v.True() {
				return false
			}
		default:
			return false
		}
	}
	return true
}
