package jobspec

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// variable is one declared input variable.
type variable struct {
	name        string
	block       *hclsyntax.Block
	typ         cty.Type
	def         *cty.Value
	validations []*hclsyntax.Block
	value       *cty.Value
}

// declareVariables decodes the variable blocks.
func (d *decoder) declareVariables(bs []*hclsyntax.Block) map[string]*variable {
	vars := map[string]*variable{}
	base := &hcl.EvalContext{Functions: d.funcs}
	for _, b := range bs {
		name := b.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			d.r.errorf(d.at(b.LabelRanges[0], "variable"), "variable name %q is not a valid identifier", name)
			continue
		}
		if prev, dup := vars[name]; dup {
			d.r.errorf(d.at(b.LabelRanges[0], "variable"), "duplicate variable %q (also at line %d)", name, prev.block.TypeRange.Start.Line)
			continue
		}
		v := &variable{name: name, block: b, typ: cty.DynamicPseudoType}
		attrs, blocks := d.content(b.Body, "variable")
		if a := attrs["type"]; a != nil {
			t, diags := typeexpr.TypeConstraint(a.Expr)
			d.hclDiags(diags)
			if !diags.HasErrors() {
				v.typ = t
			}
		}
		if a := attrs["description"]; a != nil {
			saved := d.ctx
			d.ctx = base
			d.str(a, "Variables."+name+".Description", "variable.description")
			d.ctx = saved
		}
		if a := attrs["default"]; a != nil {
			val, diags := a.Expr.Value(base)
			d.hclDiags(diags)
			if !diags.HasErrors() {
				if cv, err := convert.Convert(val, v.typ); err != nil {
					d.r.errorf(d.at(a.Expr.Range(), "variable.default"), "variable %q: default must be %s (got %s)", name, v.typ.FriendlyName(), val.Type().FriendlyName())
				} else {
					v.def = &cv
				}
			}
		}
		v.validations = blocks["validation"]
		vars[name] = v
	}
	return vars
}

// assignVariables sets values from var files, then -var flags (later
// wins), then defaults, and reports required variables without a value.
func (d *decoder) assignVariables(vars map[string]*variable, opts Options) {
	for _, f := range opts.VarFiles {
		d.varFile(vars, f)
	}
	for _, kv := range opts.Vars {
		name, raw, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		l := loc{File: "-var", Field: "var." + name}
		if !ok {
			d.r.errorf(l.named("var"), "-var %q: want NAME=VALUE", kv)
			continue
		}
		v := vars[name]
		if v == nil {
			d.r.errorf(l, "-var %s: no variable %q is declared%s", name, name, suggest(name, varNames(vars)))
			continue
		}
		val, err := typedFlag(raw, v.typ)
		if err != nil {
			d.r.errorf(l, "-var %s: %v", name, err)
			continue
		}
		v.value = &val
	}
	for _, name := range varNames(vars) {
		v := vars[name]
		if v.value == nil && v.def != nil {
			v.value = v.def
		}
		if _, hasDefault := v.block.Body.Attributes["default"]; v.value == nil && !hasDefault {
			d.r.errorf(d.at(v.block.TypeRange, "variable"), "variable %q is required: give it a default, -var %s=VALUE or a -var-file", name, name)
		}
	}
}

// typedFlag converts a -var value to the variable's type: primitive types
// take the text as is; lists, maps and objects are written in HCL syntax.
func typedFlag(raw string, t cty.Type) (cty.Value, error) {
	if t == cty.DynamicPseudoType || t.IsPrimitiveType() {
		v, err := convert.Convert(cty.StringVal(raw), t)
		if err != nil {
			return cty.NilVal, fmt.Errorf("want %s (got %q)", t.FriendlyName(), raw)
		}
		return v, nil
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), "-var", hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("want %s in HCL syntax: %s", t.FriendlyName(), diags[0].Summary)
	}
	v, diags := expr.Value(&hcl.EvalContext{Functions: functions()})
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("%s", diags[0].Summary)
	}
	cv, err := convert.Convert(v, t)
	if err != nil {
		return cty.NilVal, fmt.Errorf("want %s: %v", t.FriendlyName(), err)
	}
	return cv, nil
}

// varFile reads NAME = VALUE assignments from an HCL or JSON file.
func (d *decoder) varFile(vars map[string]*variable, path string) {
	src, err := os.ReadFile(path)
	if err != nil {
		d.r.errorf(loc{File: path, Field: "var-file"}, "reading var file: %v", err)
		return
	}
	p := hclparse.NewParser()
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.EqualFold(filepath.Ext(path), ".json") {
		f, diags = p.ParseJSON(src, path)
	} else {
		f, diags = p.ParseHCL(src, path)
	}
	saved := d.file
	d.file = path
	defer func() { d.file = saved }()
	d.hclDiags(diags)
	if diags.HasErrors() {
		return
	}
	attrs, diags := f.Body.JustAttributes()
	d.hclDiags(diags)
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		a := attrs[name]
		v := vars[name]
		if v == nil {
			d.r.warnf(d.at(a.NameRange, name), "var file sets %q, which no variable declares%s", name, suggest(name, varNames(vars)))
			continue
		}
		val, diags := a.Expr.Value(&hcl.EvalContext{Functions: d.funcs})
		d.hclDiags(diags)
		if diags.HasErrors() {
			continue
		}
		cv, err := convert.Convert(val, v.typ)
		if err != nil {
			d.r.errorf(d.at(a.Expr.Range(), name), "variable %q must be %s (got %s)", name, v.typ.FriendlyName(), val.Type().FriendlyName())
			continue
		}
		v.value = &cv
	}
}

// validateVariables runs each variable's validation blocks.
func (d *decoder) validateVariables(vars map[string]*variable) {
	for _, name := range varNames(vars) {
		v := vars[name]
		if v.value == nil {
			continue
		}
		ctx := &hcl.EvalContext{
			Functions: d.funcs,
			Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{name: *v.value})},
		}
		for _, vb := range v.validations {
			attrs, _ := d.content(vb.Body, "validation")
			cond, msg := attrs["condition"], attrs["error_message"]
			if cond == nil || msg == nil {
				d.r.errorf(d.at(vb.TypeRange, "validation"), "variable %q: a validation needs condition and error_message", name)
				continue
			}
			saved := d.ctx
			d.ctx = ctx
			ok, good := d.value(cond, "validation.condition", cty.Bool)
			text := d.str(msg, "Variables."+name+".Validation", "validation.error_message")
			d.ctx = saved
			if good && !ok.True() && text != nil {
				d.r.errorf(d.at(cond.Expr.Range(), "validation.condition"), "invalid value for variable %q: %s", name, *text)
			}
		}
	}
}

func varNames(vars map[string]*variable) []string {
	out := make([]string, 0, len(vars))
	for n := range vars {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// locals evaluates the locals blocks in dependency order.
func (d *decoder) locals(bs []*hclsyntax.Block, varObj cty.Value) map[string]cty.Value {
	pending := map[string]*hclsyntax.Attribute{}
	for _, b := range bs {
		if len(b.Body.Blocks) > 0 {
			d.r.errorf(d.at(b.Body.Blocks[0].TypeRange, "locals"), "locals takes attributes only")
		}
		for name, a := range b.Body.Attributes {
			if _, dup := pending[name]; dup {
				d.r.errorf(d.at(a.NameRange, "local."+name), "duplicate local %q", name)
				continue
			}
			pending[name] = a
		}
	}
	done := map[string]cty.Value{}
	for len(pending) > 0 {
		progress := false
		for _, name := range sortedKeys(pending) {
			a := pending[name]
			ready := true
			for _, tr := range a.Expr.Variables() {
				if tr.RootName() != "local" || len(tr) < 2 {
					continue
				}
				if ta, ok := tr[1].(hcl.TraverseAttr); ok {
					if _, isPending := pending[ta.Name]; isPending {
						ready = false
					}
				}
			}
			if !ready {
				continue
			}
			d.ctx = &hcl.EvalContext{Functions: d.funcs, Variables: map[string]cty.Value{"var": varObj, "local": cty.ObjectVal(done)}}
			v, diags := d.exprValue(a.Expr, d.ctx)
			d.hclDiags(diags)
			if diags.HasErrors() {
				v = cty.DynamicVal
			}
			done[name] = v
			delete(pending, name)
			progress = true
		}
		if !progress {
			for _, name := range sortedKeys(pending) {
				d.r.errorf(d.at(pending[name].NameRange, "local."+name), "local %q refers to itself through other locals", name)
				done[name] = cty.DynamicVal
			}
			break
		}
	}
	return done
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
