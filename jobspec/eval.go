package jobspec

import (
	"regexp"
	"sort"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions returns the functions a job file may call: go-cty's standard
// library under the names Nomad and Terraform use. The map is built once
// and shared; functions are stateless.
var functions = sync.OnceValue(buildFunctions)

func buildFunctions() map[string]function.Function {
	return map[string]function.Function{
		"abs": stdlib.AbsoluteFunc, "ceil": stdlib.CeilFunc, "floor": stdlib.FloorFunc,
		"log": stdlib.LogFunc, "max": stdlib.MaxFunc, "min": stdlib.MinFunc, "pow": stdlib.PowFunc,
		"signum": stdlib.SignumFunc, "parseint": stdlib.ParseIntFunc, "int": stdlib.IntFunc,
		"chomp": stdlib.ChompFunc, "format": stdlib.FormatFunc, "formatlist": stdlib.FormatListFunc,
		"indent": stdlib.IndentFunc, "join": stdlib.JoinFunc, "lower": stdlib.LowerFunc,
		"upper": stdlib.UpperFunc, "replace": stdlib.ReplaceFunc, "regex_replace": stdlib.RegexReplaceFunc,
		"regex": stdlib.RegexFunc, "regexall": stdlib.RegexAllFunc, "split": stdlib.SplitFunc,
		"strrev": stdlib.ReverseFunc, "strlen": stdlib.StrlenFunc, "substr": stdlib.SubstrFunc,
		"title": stdlib.TitleFunc, "trim": stdlib.TrimFunc, "trimprefix": stdlib.TrimPrefixFunc,
		"trimsuffix": stdlib.TrimSuffixFunc, "trimspace": stdlib.TrimSpaceFunc,
		"chunklist": stdlib.ChunklistFunc, "coalesce": stdlib.CoalesceFunc,
		"coalescelist": stdlib.CoalesceListFunc, "compact": stdlib.CompactFunc, "concat": stdlib.ConcatFunc,
		"contains": stdlib.ContainsFunc, "distinct": stdlib.DistinctFunc, "element": stdlib.ElementFunc,
		"flatten": stdlib.FlattenFunc, "keys": stdlib.KeysFunc, "length": stdlib.LengthFunc,
		"lookup": stdlib.LookupFunc, "merge": stdlib.MergeFunc, "range": stdlib.RangeFunc,
		"reverse": stdlib.ReverseListFunc, "setintersection": stdlib.SetIntersectionFunc,
		"setproduct": stdlib.SetProductFunc, "setsubtract": stdlib.SetSubtractFunc,
		"setunion": stdlib.SetUnionFunc, "slice": stdlib.SliceFunc, "sort": stdlib.SortFunc,
		"values": stdlib.ValuesFunc, "zipmap": stdlib.ZipmapFunc,
		"csvdecode": stdlib.CSVDecodeFunc, "jsondecode": stdlib.JSONDecodeFunc, "jsonencode": stdlib.JSONEncodeFunc,
		"formatdate": stdlib.FormatDateFunc, "timeadd": stdlib.TimeAddFunc,
		"try": tryfunc.TryFunc, "can": tryfunc.CanFunc,
	}
}

// runtimeRoot matches the roots of references the client (or the
// constraint checker) fills in at run time: ${NOMAD_PORT_http},
// ${node.unique.name}, ${attr.kernel.name}, ${meta.zone}, ${env.X},
// ${device.model}, and any upper-case environment name such as ${HOME}.
var runtimeRoot = regexp.MustCompile(`^(node|attr|meta|env|device|unique|[A-Z_][A-Za-z0-9_]*)$`)

// exprValue evaluates expr with ctx, keeping runtime references as their
// literal "${...}" text, even inside larger templates.
func (d *decoder) exprValue(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	tree := map[string]any{}
	for _, tr := range expr.Variables() {
		root := tr.RootName()
		if root == "var" || root == "local" || !runtimeRoot.MatchString(root) {
			continue
		}
		text := d.source(tr.SourceRange())
		node := tree
		name := root
	steps:
		for _, step := range tr[1:] {
			var key string
			switch s := step.(type) {
			case hcl.TraverseAttr:
				key = s.Name
			case hcl.TraverseIndex:
				if s.Key.Type() != cty.String || s.Key.IsNull() {
					key = ""
				} else {
					key = s.Key.AsString()
				}
			}
			if key == "" {
				break steps
			}
			child, ok := node[name].(map[string]any)
			if !ok {
				if _, leaf := node[name]; leaf {
					break steps
				}
				child = map[string]any{}
				node[name] = child
			}
			node, name = child, key
		}
		if _, exists := node[name]; !exists {
			node[name] = "${" + text + "}"
		}
	}
	if len(tree) == 0 {
		return expr.Value(ctx)
	}
	child := ctx.NewChild()
	child.Variables = map[string]cty.Value{}
	for k, v := range tree {
		child.Variables[k] = placeholder(v)
	}
	return expr.Value(child)
}

func placeholder(v any) cty.Value {
	switch t := v.(type) {
	case string:
		return cty.StringVal(t)
	case map[string]any:
		attrs := make(map[string]cty.Value, len(t))
		names := make([]string, 0, len(t))
		for k := range t {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			attrs[k] = placeholder(t[k])
		}
		return cty.ObjectVal(attrs)
	}
	return cty.NullVal(cty.DynamicPseudoType)
}

// source returns the text of rng in the file being decoded.
func (d *decoder) source(rng hcl.Range) string {
	if rng.Start.Byte < 0 || rng.End.Byte > len(d.src) || rng.Start.Byte > rng.End.Byte {
		return ""
	}
	return string(d.src[rng.Start.Byte:rng.End.Byte])
}
