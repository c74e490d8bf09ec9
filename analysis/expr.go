package analysis

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/droverhq/drover/structs"
)

// The names a success or failure expression may use.
const (
	VarResult  = "result"
	VarResults = "results"
)

// Functions are the functions a condition may call: go-cty's standard
// numeric, collection and boolean functions, and alltrue, anytrue and sum.
var Functions = sync.OnceValue(func() map[string]function.Function {
	return map[string]function.Function{
		"abs": stdlib.AbsoluteFunc, "ceil": stdlib.CeilFunc, "floor": stdlib.FloorFunc,
		"log": stdlib.LogFunc, "max": stdlib.MaxFunc, "min": stdlib.MinFunc, "pow": stdlib.PowFunc,
		"signum": stdlib.SignumFunc, "int": stdlib.IntFunc,
		"length": stdlib.LengthFunc, "element": stdlib.ElementFunc, "contains": stdlib.ContainsFunc,
		"concat": stdlib.ConcatFunc, "slice": stdlib.SliceFunc, "reverse": stdlib.ReverseListFunc,
		"sort": stdlib.SortFunc, "distinct": stdlib.DistinctFunc, "range": stdlib.RangeFunc,
		"tonumber": stdlib.MakeToFunc(cty.Number), "tobool": stdlib.MakeToFunc(cty.Bool),
		"alltrue": allTrueFunc, "anytrue": anyTrueFunc, "sum": sumFunc,
	}
})

// ParseCondition parses a success or failure expression and checks that it
// names nothing but result and results and only known functions.
func ParseCondition(src string) (hcl.Expression, error) {
	expr, diags := hclsyntax.ParseExpression([]byte(src), "condition", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("does not parse: %s", diagText(diags))
	}
	for _, tr := range expr.Variables() {
		if name := tr.RootName(); name != VarResult && name != VarResults {
			return nil, fmt.Errorf("names %q; a condition may name only result and results", name)
		}
	}
	funcs := Functions()
	var unknown []string
	hclsyntax.VisitAll(expr.(hclsyntax.Node), func(n hclsyntax.Node) hcl.Diagnostics {
		if call, ok := n.(*hclsyntax.FunctionCallExpr); ok {
			if _, known := funcs[call.Name]; !known {
				unknown = append(unknown, call.Name)
			}
		}
		return nil
	})
	if len(unknown) > 0 {
		return nil, fmt.Errorf("calls unknown function %q", unknown[0])
	}
	return expr, nil
}

func diagText(diags hcl.Diagnostics) string {
	var parts []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		s := d.Summary
		if d.Detail != "" {
			s += ": " + d.Detail
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// Evaluate gives the outcome of one measurement with the given values
// (results; result is the first): success if success is true, else
// failure if failure is true, else inconclusive. An empty expression is
// never true. An expression that errors or does not give a bool is an
// error.
func Evaluate(success, failure string, values []float64) (outcome string, err error) {
	defer func() {
		if r := recover(); r != nil {
			outcome, err = "", fmt.Errorf("condition: %v", r)
		}
	}()
	if len(values) == 0 {
		return "", fmt.Errorf("no values")
	}
	ctx := evalContext(values)
	for _, c := range []struct{ name, src, outcome string }{
		{"success", success, structs.AnalysisOutcomeSuccess},
		{"failure", failure, structs.AnalysisOutcomeFailure},
	} {
		if strings.TrimSpace(c.src) == "" {
			continue
		}
		ok, err := evalBool(c.src, ctx)
		if err != nil {
			return "", fmt.Errorf("%s %q: %v", c.name, c.src, err)
		}
		if ok {
			return c.outcome, nil
		}
	}
	return structs.AnalysisOutcomeInconclusive, nil
}

func evalContext(values []float64) *hcl.EvalContext {
	list := make([]cty.Value, len(values))
	for i, f := range values {
		list[i] = cty.NumberVal(new(big.Float).SetFloat64(f))
	}
	return &hcl.EvalContext{
		Variables: map[string]cty.Value{
			VarResult:  list[0],
			VarResults: cty.ListVal(list),
		},
		Functions: Functions(),
	}
}

func evalBool(src string, ctx *hcl.EvalContext) (bool, error) {
	expr, err := ParseCondition(src)
	if err != nil {
		return false, err
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return false, fmt.Errorf("%s", diagText(diags))
	}
	if !v.IsKnown() || v.IsNull() {
		return false, fmt.Errorf("gives no value")
	}
	if !v.Type().Equals(cty.Bool) {
		return false, fmt.Errorf("gives a %s, not a bool", v.Type().FriendlyName())
	}
	return v.True(), nil
}

func boolList(fn string) func(args []cty.Value, _ cty.Type) ([]bool, error) {
	return func(args []cty.Value, _ cty.Type) ([]bool, error) {
		l := args[0]
		t := l.Type()
		if !(t.IsListType() || t.IsTupleType() || t.IsSetType()) {
			return nil, function.NewArgErrorf(0, "%s needs a list of bools (got %s)", fn, t.FriendlyName())
		}
		var out []bool
		for it := l.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.IsNull() || !e.IsKnown() || !e.Type().Equals(cty.Bool) {
				return nil, function.NewArgErrorf(0, "%s needs a list of bools", fn)
			}
			out = append(out, e.True())
		}
		return out, nil
	}
}

// allTrueFunc is Terraform's alltrue(list): true when every element is true
// (and for an empty list).
var allTrueFunc = function.New(&function.Spec{
	Description: "Returns true if all elements of the list are true.",
	Params:      []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type:        function.StaticReturnType(cty.Bool),
	Impl: func(args []cty.Value, t cty.Type) (cty.Value, error) {
		bs, err := boolList("alltrue")(args, t)
		if err != nil {
			return cty.NilVal, err
		}
		for _, b := range bs {
			if !b {
				return cty.False, nil
			}
		}
		return cty.True, nil
	},
})

// anyTrueFunc is Terraform's anytrue(list).
var anyTrueFunc = function.New(&function.Spec{
	Description: "Returns true if any element of the list is true.",
	Params:      []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type:        function.StaticReturnType(cty.Bool),
	Impl: func(args []cty.Value, t cty.Type) (cty.Value, error) {
		bs, err := boolList("anytrue")(args, t)
		if err != nil {
			return cty.NilVal, err
		}
		for _, b := range bs {
			if b {
				return cty.True, nil
			}
		}
		return cty.False, nil
	},
})

// sumFunc is Terraform's sum(list): the sum of a list of numbers.
var sumFunc = function.New(&function.Spec{
	Description: "Returns the sum of a list of numbers.",
	Params:      []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type:        function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		l := args[0]
		t := l.Type()
		if !(t.IsListType() || t.IsTupleType() || t.IsSetType()) {
			return cty.NilVal, function.NewArgErrorf(0, "sum needs a list of numbers (got %s)", t.FriendlyName())
		}
		total := cty.Zero
		for it := l.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.IsNull() || !e.IsKnown() || !e.Type().Equals(cty.Number) {
				return cty.NilVal, function.NewArgErrorf(0, "sum needs a list of numbers")
			}
			total = total.Add(e)
		}
		return total, nil
	},
})

// FunctionNames lists the functions a condition may call, sorted.
func FunctionNames() []string {
	var names []string
	for n := range Functions() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
