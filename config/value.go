package config

import (
	"math/big"
	"strconv"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// maxInt bounds whole numbers in a file; no setting needs more.
const maxInt = 1 << 31

// field decodes one item into the field f; name is the path as written
// (an alias of f.path, or f.path itself).
func (d *decoder) field(f *field, it item, name string) {
	at := d.at(it.rng)
	if it.block != nil {
		if f.kind != kMap {
			d.r.errorf(at, name, "%s is an attribute, not a block: write %s = ...", name, it.name)
			return
		}
		d.mapBlock(f, it, name)
		return
	}
	v, ok := d.eval(it.attr.Expr, name)
	if !ok {
		return
	}
	vat := d.at(it.attr.Expr.Range())
	switch p := f.ptr(d.cfg).(type) {
	case *string:
		s, ok := d.convert(v, cty.String, f, name, vat)
		if !ok {
			return
		}
		*p = s.AsString()
	case *bool:
		b, ok := d.convert(v, cty.Bool, f, name, vat)
		if !ok {
			return
		}
		*p = b.True()
	case *int:
		n, ok := d.convert(v, cty.Number, f, name, vat)
		if !ok {
			return
		}
		i, ok := wholeNumber(n.AsBigFloat())
		if !ok {
			d.r.errorf(vat, name, "%s must be %s (got %s)", name, f.kind, n.AsBigFloat().Text('g', 10))
			return
		}
		*p = i
	case *time.Duration:
		if v.Type() != cty.String {
			d.r.errorf(vat, name, "%s must be %s (got %s)", name, f.kind, describe(v))
			return
		}
		dur, err := time.ParseDuration(v.AsString())
		if err != nil {
			d.r.errorf(vat, name, "%s must be %s (got %q)", name, f.kind, v.AsString())
			return
		}
		*p = dur
	case *[]string:
		l, ok := d.convert(v, cty.List(cty.String), f, name, vat)
		if !ok {
			return
		}
		out := make([]string, 0, l.LengthInt())
		for _, e := range l.AsValueSlice() {
			if e.IsNull() {
				d.r.errorf(vat, name, "%s must not hold null", name)
				return
			}
			out = append(out, e.AsString())
		}
		*p = out
	case *map[string]string:
		m, ok := d.convert(v, cty.Map(cty.String), f, name, vat)
		if !ok {
			return
		}
		out := make(map[string]string, m.LengthInt())
		for k, e := range m.AsValueMap() {
			if e.IsNull() {
				d.r.errorf(vat, name, "%s[%q] must not be null", name, k)
				return
			}
			out[k] = e.AsString()
		}
		*p = out
	}
	d.cfg.mark(f.path, at)
}

// mapBlock decodes meta { k = "v" }, the block form of a map.
func (d *decoder) mapBlock(f *field, it item, name string) {
	attrs, diags := it.block.Body.JustAttributes()
	d.hclDiags(diags, name)
	out := make(map[string]string, len(attrs))
	for k, a := range attrs {
		v, ok := d.eval(a.Expr, name+"."+k)
		if !ok {
			continue
		}
		s, ok := d.convert(v, cty.String, &field{kind: kString}, name+"."+k, d.at(a.Expr.Range()))
		if !ok {
			continue
		}
		out[k] = s.AsString()
	}
	*f.ptr(d.cfg).(*map[string]string) = out
	d.cfg.mark(f.path, d.at(it.rng))
}

// eval evaluates an expression that may use no variable or function.
func (d *decoder) eval(expr hcl.Expression, name string) (cty.Value, bool) {
	v, diags := expr.Value(nil)
	d.hclDiags(diags, name)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	at := d.at(expr.Range())
	if !v.IsWhollyKnown() {
		d.r.errorf(at, name, "%s: value is not known", name)
		return cty.NilVal, false
	}
	if v.IsNull() {
		d.r.errorf(at, name, "%s must not be null", name)
		return cty.NilVal, false
	}
	return v, true
}

// convert converts v to want, reporting a mismatch against f.
func (d *decoder) convert(v cty.Value, want cty.Type, f *field, name string, at Location) (cty.Value, bool) {
	cv, err := convert.Convert(v, want)
	if err != nil || cv.IsNull() || !cv.IsWhollyKnown() {
		d.r.errorf(at, name, "%s must be %s (got %s)", name, f.kind, describe(v))
		return cty.NilVal, false
	}
	return cv, true
}

// describe shows a primitive value as written, or names the type of any
// other.
func describe(v cty.Value) string {
	switch v.Type() {
	case cty.String:
		return strconv.Quote(v.AsString())
	case cty.Number:
		return v.AsBigFloat().Text('g', 10)
	case cty.Bool:
		return strconv.FormatBool(v.True())
	}
	return v.Type().FriendlyName()
}

// wholeNumber returns n as an int when it is whole and within ±maxInt.
func wholeNumber(n *big.Float) (int, bool) {
	if n == nil || n.IsInf() || !n.IsInt() {
		return 0, false
	}
	i, acc := n.Int64()
	if acc != big.Exact || i > maxInt || i < -maxInt {
		return 0, false
	}
	return int(i), true
}
