package jobspec

import (
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// decoder walks the syntax tree of a job file. Every attribute and block is
// checked against the grammar table, evaluated, and its place recorded in
// the locator under its JSON path.
type decoder struct {
	file string
	src  []byte
	ctx  *hcl.EvalContext
	r    *report
	lc   *locator
	// funcs are the functions the job file may call (jobFunctions).
	funcs map[string]function.Function
	// extraRoots are more roots of runtime references, kept as written
	// while one attribute is decoded (an analysis query's ${job.version}).
	extraRoots map[string]bool
}

// repeatable names the blocks that may appear more than once in a block.
var repeatable = map[string]bool{
	"constraint": true, "affinity": true, "group": true, "spread": true, "task": true, "service": true, "check": true,
	"port": true, "target": true, "network": true, "variable": true, "locals": true, "validation": true, "job": true, "template": true, "artifact": true,
	"volume": true, "volume_mount": true, "analysis": true,
}

// mapBlocks may also be written as attributes: meta = { k = "v" }.
var mapBlocks = map[string]bool{"meta": true, "env": true, "header": true, "config": true, "policy": true, "options": true, "headers": true}

// labels is how many labels each block takes.
var labels = map[string]int{"job": 1, "group": 1, "task": 1, "port": 1, "target": 1, "variable": 1, "volume": 1, "analysis": 1}

func (d *decoder) at(rng hcl.Range, field string) loc {
	return loc{File: d.file, Line: rng.Start.Line, Column: rng.Start.Column, Field: field}
}

// hclDiags reports HCL's own diagnostics (syntax errors, evaluation errors).
func (d *decoder) hclDiags(diags hcl.Diagnostics) {
	for _, h := range diags {
		l := loc{File: d.file}
		if h.Subject != nil {
			l = d.at(*h.Subject, "")
		}
		msg := h.Summary
		if h.Detail != "" {
			msg += ": " + h.Detail
		}
		if h.Severity == hcl.DiagError {
			d.r.errorf(l, "%s", msg)
		} else {
			d.r.warnf(l, "%s", msg)
		}
	}
}

// content checks a block body against the grammar of blockName and
// returns the supported attributes and blocks. Unknown names are errors
// with a suggestion; unsupported ones are errors or warnings as the table
// says.
func (d *decoder) content(body *hclsyntax.Body, blockName string) (map[string]*hclsyntax.Attribute, map[string][]*hclsyntax.Block) {
	attrs := map[string]*hclsyntax.Attribute{}
	blocks := map[string][]*hclsyntax.Block{}
	for name, a := range body.Attributes {
		e, ok := lookupHCL(blockName, name)
		if ok && e.Kind == block && mapBlocks[name] {
			attrs[name] = a
			continue
		}
		if !ok || e.Kind != attr {
			if ok {
				d.r.errorf(d.at(a.NameRange, blockName+"."+name), "%s.%s is a block, not an attribute: write %s { ... }", blockName, name, name)
				continue
			}
			d.r.errorf(d.at(a.NameRange, blockName+"."+name), "unknown attribute %q in %s%s", name, blockName, suggest(name, hclNames(blockName)))
			continue
		}
		if e.Support == refused || e.Support == ignored {
			// As in API JSON, a zero value or Nomad's own default asks for
			// nothing drover lacks.
			if v, diags := d.exprValue(a.Expr, d.ctx); !diags.HasErrors() && ctyZero(v) {
				continue
			} else if !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() && isNomadDefault(blockName, e, v.AsString()) {
				continue
			}
		}
		if d.unsupported(e, a.NameRange, blockName) {
			continue
		}
		attrs[name] = a
	}
	for _, b := range body.Blocks {
		name := b.Type
		e, ok := lookupHCL(blockName, name)
		if !ok || e.Kind != block {
			if ok {
				d.r.errorf(d.at(b.TypeRange, blockName+"."+name), "%s.%s is an attribute, not a block: write %s = ...", blockName, name, name)
				continue
			} else {
				if name == "dynamic" {
					d.r.errorf(d.at(b.TypeRange, blockName+"."+name), "dynamic blocks are not supported by drover")
					continue
				}
				d.r.errorf(d.at(b.TypeRange, blockName+"."+name), "unknown block %q in %s%s", name, blockName, suggest(name, hclNames(blockName)))
				continue
			}
		}
		if d.unsupported(e, b.TypeRange, blockName) {
			continue
		}
		if want := labels[name]; len(b.Labels) != want && name != "meta" && name != "env" && name != "header" {
			d.r.errorf(d.at(b.TypeRange, blockName+"."+name), "%s block needs %d label(s), got %d", name, want, len(b.Labels))
			continue
		}
		if len(blocks[name]) > 0 && !repeatable[name] {
			d.r.errorf(d.at(b.TypeRange, blockName+"."+name), "duplicate %s block in %s (only one is allowed)", name, blockName)
			continue
		}
		blocks[name] = append(blocks[name], b)
	}
	for name, a := range attrs {
		if bs := blocks[name]; len(bs) > 0 {
			d.r.errorf(d.at(bs[0].TypeRange, blockName+"."+name), "%s is set both as an attribute (line %d) and as a block", name, a.NameRange.Start.Line)
		}
	}
	return attrs, blocks
}

// unsupported reports e when drover refuses or ignores it.
func (d *decoder) unsupported(e element, rng hcl.Range, blockName string) bool {
	field := blockName + "." + e.HCL
	switch e.Support {
	case refused:
		d.r.errorf(d.at(rng, field), "%s is not supported by drover (%s)", field, e.Note)
		return true
	case ignored:
		d.r.warnf(d.at(rng, field), "%s is not supported by drover and is ignored (%s)", field, e.Note)
		return true
	}
	return false
}

// value evaluates an attribute, converted to want.
func (d *decoder) value(a *hclsyntax.Attribute, field string, want cty.Type) (cty.Value, bool) {
	v, diags := d.exprValue(a.Expr, d.ctx)
	d.hclDiags(diags)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	if !v.IsWhollyKnown() {
		// Only a variable or local that already failed is unknown; its
		// error has been reported.
		return cty.NilVal, false
	}
	if want == cty.DynamicPseudoType {
		return v, true
	}
	cv, err := convert.Convert(v, want)
	if err != nil {
		d.r.errorf(d.at(a.Expr.Range(), field), "%s must be %s (got %s)", field, want.FriendlyName(), v.Type().FriendlyName())
		return cty.NilVal, false
	}
	if cv.IsNull() {
		d.r.errorf(d.at(a.Expr.Range(), field), "%s must not be null", field)
		return cty.NilVal, false
	}
	return cv, true
}

// attrs decodes attributes into typed pointers; set records each one's
// place under path.Field.
func (d *decoder) record(a *hclsyntax.Attribute, path, field string) {
	d.lc.set(path, d.at(a.SrcRange, field))
}

// eval records where attribute a (nil: not written) is, at path, and
// evaluates it as ty. ok is false when a is not written, or when it cannot
// be read as ty: then the error is reported and path is marked bad.
func (d *decoder) eval(a *hclsyntax.Attribute, path, field string, ty cty.Type) (cty.Value, bool) {
	if a == nil {
		return cty.NilVal, false
	}
	d.record(a, path, field)
	v, ok := d.value(a, field, ty)
	if !ok {
		d.lc.bad[path] = true
		return cty.NilVal, false
	}
	return v, true
}

func (d *decoder) str(a *hclsyntax.Attribute, path, field string) *string {
	v, ok := d.eval(a, path, field, cty.String)
	if !ok {
		return nil
	}
	s := v.AsString()
	return &s
}

func (d *decoder) int(a *hclsyntax.Attribute, path, field string) *int {
	v, ok := d.eval(a, path, field, cty.Number)
	if !ok {
		return nil
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		d.r.errorf(d.at(a.Expr.Range(), field), "%s must be a whole number (got %s)", field, bf.Text('g', -1))
		d.lc.bad[path] = true
		return nil
	}
	i, acc := bf.Int64()
	if acc != big.Exact || i > 1<<31-1 || i < -(1<<31) {
		d.r.errorf(d.at(a.Expr.Range(), field), "%s is out of range (got %s)", field, bf.Text('g', -1))
		d.lc.bad[path] = true
		return nil
	}
	n := int(i)
	return &n
}

func (d *decoder) bool(a *hclsyntax.Attribute, path, field string) *bool {
	v, ok := d.eval(a, path, field, cty.Bool)
	if !ok {
		return nil
	}
	t := v.True()
	return &t
}

// dur decodes a duration written as a string ("10s", "1m30s").
func (d *decoder) dur(a *hclsyntax.Attribute, path, field string) *time.Duration {
	v, ok := d.eval(a, path, field, cty.DynamicPseudoType)
	if !ok {
		return nil
	}
	if v.IsNull() || v.Type() != cty.String {
		d.lc.bad[path] = true
		d.r.errorf(d.at(a.Expr.Range(), field), "%s must be a duration string such as \"10s\" (got %s)", field, v.Type().FriendlyName())
		return nil
	}
	dd, err := time.ParseDuration(v.AsString())
	if err != nil {
		d.r.errorf(d.at(a.Expr.Range(), field), "%s: invalid duration %q (use a number and a unit: \"10s\", \"1m30s\", \"500ms\")", field, v.AsString())
		d.lc.bad[path] = true
		return nil
	}
	return &dd
}

func (d *decoder) strs(a *hclsyntax.Attribute, path, field string) []string {
	if a == nil {
		return nil
	}
	d.record(a, path, field)
	v, ok := d.value(a, field, cty.List(cty.String))
	if !ok {
		return nil
	}
	out := []string{}
	for _, e := range v.AsValueSlice() {
		if e.IsNull() {
			d.r.errorf(d.at(a.Expr.Range(), field), "%s must not contain null", field)
			continue
		}
		out = append(out, e.AsString())
	}
	return out
}

// strMap decodes a map of strings written as a block (meta { k = "v" }) or
// an attribute (meta = { k = "v" }).
func (d *decoder) strMap(attrs map[string]*hclsyntax.Attribute, blocks map[string][]*hclsyntax.Block, name, path, field string) map[string]string {
	out := map[string]string{}
	if a := attrs[name]; a != nil {
		d.record(a, path, field)
		v, ok := d.value(a, field, cty.Map(cty.String))
		if !ok {
			return nil
		}
		for k, e := range v.AsValueMap() {
			if e.IsNull() {
				d.r.errorf(d.at(a.Expr.Range(), field), "%s.%s must not be null", field, k)
				continue
			}
			out[k] = e.AsString()
		}
		return out
	}
	bs := blocks[name]
	if len(bs) == 0 {
		return nil
	}
	b := bs[0]
	d.lc.set(path, d.at(b.TypeRange, field))
	if len(b.Body.Blocks) > 0 {
		d.r.errorf(d.at(b.Body.Blocks[0].TypeRange, field), "%s takes attributes only (got block %q)", field, b.Body.Blocks[0].Type)
	}
	for k, a := range b.Body.Attributes {
		if s := d.str(a, path+"."+k, field+"."+k); s != nil {
			out[k] = *s
		}
	}
	return out
}

// anyValue turns an evaluated value into plain data: string, int64 or
// float64, bool, []any, map[string]any, nil.
func anyValue(v cty.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, fmt.Errorf("value is not known")
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString(), nil
	case t == cty.Bool:
		return v.True(), nil
	case t == cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInt() {
			if i, acc := bf.Int64(); acc == big.Exact {
				return i, nil
			}
		}
		f, _ := bf.Float64()
		if math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s is out of range", bf.Text('g', 6))
		}
		return f, nil
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := []any{}
		for _, e := range v.AsValueSlice() {
			x, err := anyValue(e)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for k, e := range v.AsValueMap() {
			x, err := anyValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value of type %s", t.FriendlyName())
}

// freeform decodes a driver config block: attributes become values,
// nested blocks lists of maps. Where each key is written is recorded
// under path ("….Config.image", "….Config.mount[0].target"), so that the
// driver's checks can point at it.
func (d *decoder) freeform(body *hclsyntax.Body, field, path string) map[string]any {
	out := map[string]any{}
	for name, a := range body.Attributes {
		d.lc.set(path+"."+name, d.at(a.SrcRange, field+"."+name))
		v, ok := d.value(a, field+"."+name, cty.DynamicPseudoType)
		if !ok {
			continue
		}
		x, err := anyValue(v)
		if err != nil {
			d.r.errorf(d.at(a.Expr.Range(), field+"."+name), "%s.%s: %v", field, name, err)
			continue
		}
		out[name] = x
	}
	for _, b := range body.Blocks {
		list, _ := out[b.Type].([]any)
		bpath := fmt.Sprintf("%s.%s[%d]", path, b.Type, len(list))
		if len(list) == 0 {
			d.lc.set(path+"."+b.Type, d.at(b.TypeRange, field+"."+b.Type))
		}
		d.lc.set(bpath, d.at(b.TypeRange, field+"."+b.Type))
		m := d.freeform(b.Body, field+"."+b.Type, bpath)
		for i := len(b.Labels) - 1; i >= 0; i-- {
			m = map[string]any{b.Labels[i]: m}
		}
		if _, clash := out[b.Type]; clash && list == nil {
			d.r.errorf(d.at(b.TypeRange, field+"."+b.Type), "%s.%s is set both as an attribute and as a block", field, b.Type)
			continue
		}
		out[b.Type] = append(list, m)
	}
	return out
}

// ctyZero reports whether v is null, false, 0, "" or an empty collection.
func ctyZero(v cty.Value) bool {
	if v.IsNull() {
		return true
	}
	if !v.IsWhollyKnown() {
		return false
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString() == ""
	case t == cty.Bool:
		return !v.True()
	case t == cty.Number:
		return v.AsBigFloat().Sign() == 0
	case t.IsListType() || t.IsSetType() || t.IsMapType() || t.IsTupleType() || t.IsObjectType():
		return v.LengthInt() == 0
	}
	return false
}

// amount decodes a count or a share of the group's count: a whole number
// N, or a string "N%" (or "N"). The range of a percentage is checked with
// the merged strategy (checkPolicies), where the error can name the block
// the value came from.
func (d *decoder) amount(a *hclsyntax.Attribute, path, field string) *structs.Amount {
	v, ok := d.eval(a, path, field, cty.DynamicPseudoType)
	if !ok {
		return nil
	}
	am, ok := d.amountValue(v, a.Expr.Range(), field)
	if !ok {
		d.lc.bad[path] = true
		return nil
	}
	return &am
}

// amountValue reads one evaluated count or percentage written at rng.
func (d *decoder) amountValue(v cty.Value, rng hcl.Range, field string) (structs.Amount, bool) {
	switch {
	case v.IsNull():
		d.r.errorf(d.at(rng, field), "%s must not be null", field)
	case v.Type() == cty.Number:
		bf := v.AsBigFloat()
		if !bf.IsInt() {
			d.r.errorf(d.at(rng, field), "%s must be a whole number or a percentage \"N%%\" (got %s)", field, bf.Text('g', -1))
			break
		}
		i, acc := bf.Int64()
		if acc != big.Exact || i > 1<<31-1 || i < -(1<<31) {
			d.r.errorf(d.at(rng, field), "%s is out of range (got %s)", field, bf.Text('g', -1))
			break
		}
		return structs.Amount{Value: int(i)}, true
	case v.Type() == cty.String:
		am, err := structs.ParseAmount(v.AsString())
		if err != nil || am.Value > 1<<31-1 || am.Value < -(1<<31) {
			d.r.errorf(d.at(rng, field), "%s %v (got %q)", field, structs.ErrAmount, v.AsString())
			break
		}
		return am, true
	default:
		d.r.errorf(d.at(rng, field), "%s %v (got %s)", field, structs.ErrAmount, v.Type().FriendlyName())
	}
	return structs.Amount{}, false
}

// amounts decodes a list of counts and percentages (checkpoints =
// [1, "50%"]), recording where each element is written as path[i].
func (d *decoder) amounts(a *hclsyntax.Attribute, path, field string) *[]structs.Amount {
	v, ok := d.eval(a, path, field, cty.DynamicPseudoType)
	if !ok {
		return nil
	}
	t := v.Type()
	if v.IsNull() || !(t.IsListType() || t.IsTupleType()) {
		d.r.errorf(d.at(a.Expr.Range(), field), "%s must be a list of whole numbers or percentages \"N%%\" (got %s)", field, t.FriendlyName())
		d.lc.bad[path] = true
		return nil
	}
	var elems []hclsyntax.Expression
	if tuple, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
		elems = tuple.Exprs
	}
	out := []structs.Amount{}
	bad := false
	for i, e := range v.AsValueSlice() {
		rng := a.Expr.Range()
		if len(elems) == v.LengthInt() {
			rng = elems[i].Range()
		}
		d.lc.set(fmt.Sprintf("%s[%d]", path, i), d.at(rng, field))
		am, ok := d.amountValue(e, rng, field)
		if !ok {
			bad = true
			continue
		}
		out = append(out, am)
	}
	if bad {
		d.lc.bad[path] = true
		return nil
	}
	return &out
}

// maxParallel decodes max_parallel: a count into MaxParallel, or "N%"
// into MaxParallelPercent (whose place is recorded too, under the same
// job-file name).
func (d *decoder) maxParallel(a *hclsyntax.Attribute, path, field string, u *specUpdate) {
	am := d.amount(a, path, field)
	switch {
	case am == nil:
	case am.Percent:
		d.record(a, path+"Percent", field)
		u.MaxParallelPercent = &am.Value
	default:
		u.MaxParallel = &am.Value
	}
}
