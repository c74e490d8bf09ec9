package jobspec

import (
	"errors"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-cty-funcs/cidr"
	"github.com/hashicorp/go-cty-funcs/collection"
	"github.com/hashicorp/go-cty-funcs/crypto"
	"github.com/hashicorp/go-cty-funcs/encoding"
	"github.com/hashicorp/go-cty-funcs/filesystem"
	"github.com/hashicorp/go-cty-funcs/uuid"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions returns the functions a job file may call that touch no file:
// Nomad's HCL2 functions (website/jobspec/functions.md), each from go-cty's
// standard library, hashicorp/go-cty-funcs, go-cty-yaml or HCL's own
// extensions, under the names Nomad gives them. The map is built once and
// shared; functions are stateless. fileFunctions adds the filesystem ones.
var functions = sync.OnceValue(buildFunctions)

func buildFunctions() map[string]function.Function {
	return map[string]function.Function{
		// Collections.
		"chunklist": stdlib.ChunklistFunc, "coalesce": collection.CoalesceFunc,
		"coalescelist": stdlib.CoalesceListFunc, "compact": stdlib.CompactFunc, "concat": stdlib.ConcatFunc,
		"contains": stdlib.ContainsFunc, "distinct": stdlib.DistinctFunc, "element": stdlib.ElementFunc,
		"flatten": stdlib.FlattenFunc, "index": indexFunc, "keys": stdlib.KeysFunc, "length": stdlib.LengthFunc,
		"lookup": stdlib.LookupFunc, "merge": stdlib.MergeFunc, "range": stdlib.RangeFunc,
		"reverse": stdlib.ReverseListFunc, "setintersection": stdlib.SetIntersectionFunc,
		"setproduct": stdlib.SetProductFunc, "setsubtract": stdlib.SetSubtractFunc,
		"setunion": stdlib.SetUnionFunc, "slice": stdlib.SliceFunc, "sort": stdlib.SortFunc,
		"values": stdlib.ValuesFunc, "zipmap": stdlib.ZipmapFunc,
		// Type conversion.
		"can": tryfunc.CanFunc, "try": tryfunc.TryFunc, "convert": typeexpr.ConvertFunc,
		"tobool": stdlib.MakeToFunc(cty.Bool), "tonumber": stdlib.MakeToFunc(cty.Number),
		"tostring": stdlib.MakeToFunc(cty.String), "tolist": stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"toset": stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)), "tomap": stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		// Hash and crypto.
		"bcrypt": crypto.BcryptFunc, "md5": crypto.Md5Func, "rsadecrypt": crypto.RsaDecryptFunc,
		"sha1": crypto.Sha1Func, "sha256": crypto.Sha256Func, "sha512": crypto.Sha512Func,
		// Date and time.
		"formatdate": stdlib.FormatDateFunc, "timeadd": stdlib.TimeAddFunc, "timestamp": timestampFunc,
		// Encoding.
		"base64decode": encoding.Base64DecodeFunc, "base64encode": encoding.Base64EncodeFunc,
		"csvdecode": stdlib.CSVDecodeFunc, "jsondecode": stdlib.JSONDecodeFunc, "jsonencode": stdlib.JSONEncodeFunc,
		"urlencode": encoding.URLEncodeFunc, "yamldecode": ctyyaml.YAMLDecodeFunc, "yamlencode": ctyyaml.YAMLEncodeFunc,
		// IP networks.
		"cidrhost": cidr.HostFunc, "cidrnetmask": cidr.NetmaskFunc, "cidrsubnet": cidr.SubnetFunc,
		"cidrsubnets": cidr.SubnetsFunc,
		// Numbers.
		"abs": stdlib.AbsoluteFunc, "ceil": stdlib.CeilFunc, "floor": stdlib.FloorFunc,
		"log": stdlib.LogFunc, "max": stdlib.MaxFunc, "min": stdlib.MinFunc, "pow": stdlib.PowFunc,
		"signum": stdlib.SignumFunc, "parseint": stdlib.ParseIntFunc, "int": stdlib.IntFunc,
		// Strings.
		"chomp": stdlib.ChompFunc, "format": stdlib.FormatFunc, "formatlist": stdlib.FormatListFunc,
		"indent": stdlib.IndentFunc, "join": stdlib.JoinFunc, "lower": stdlib.LowerFunc,
		"upper": stdlib.UpperFunc, "replace": stdlib.ReplaceFunc, "regex_replace": stdlib.RegexReplaceFunc,
		"regex": stdlib.RegexFunc, "regexall": stdlib.RegexAllFunc, "split": stdlib.SplitFunc,
		"strrev": stdlib.ReverseFunc, "strlen": stdlib.StrlenFunc, "substr": stdlib.SubstrFunc,
		"title": stdlib.TitleFunc, "trim": stdlib.TrimFunc, "trimprefix": stdlib.TrimPrefixFunc,
		"trimsuffix": stdlib.TrimSuffixFunc, "trimspace": stdlib.TrimSpaceFunc,
		// UUIDs.
		"uuidv4": uuid.V4Func, "uuidv5": uuid.V5Func,
	}
}

// fileFunctionNames are the functions that read the local filesystem.
var fileFunctionNames = []string{"abspath", "basename", "dirname", "file", "fileexists", "fileset", "pathexpand"}

// errFilesystem is the error of a filesystem function where files may not
// be read: a job file parsed by the agent's /v1/jobs/parse.
var errFilesystem = errors.New("filesystem functions are disabled where the job file is parsed by the agent (run the drover CLI on the file instead)")

// jobFunctions returns the functions of one parse: every function of
// functions(), and the filesystem functions reading relative paths from
// the job file's directory (opts.BaseDir, else the directory of filename)
// when opts.AllowFS is set, or else failing with errFilesystem.
func jobFunctions(filename string, opts Options) map[string]function.Function {
	out := make(map[string]function.Function, len(functions())+len(fileFunctionNames))
	for k, f := range functions() {
		out[k] = f
	}
	if !opts.AllowFS {
		for _, name := range fileFunctionNames {
			out[name] = disabledFunc(name)
		}
		return out
	}
	base := opts.BaseDir
	if base == "" {
		base = filepath.Dir(filename)
	}
	out["abspath"] = filesystem.AbsPathFunc
	out["basename"] = filesystem.BasenameFunc
	out["dirname"] = filesystem.DirnameFunc
	out["file"] = filesystem.MakeFileFunc(base, false)
	out["fileexists"] = filesystem.MakeFileExistsFunc(base)
	out["fileset"] = filesystem.MakeFileSetFunc(base)
	out["pathexpand"] = filesystem.PathExpandFunc
	return out
}

// disabledFunc stands in for a filesystem function: it takes any
// arguments and fails with errFilesystem.
func disabledFunc(name string) function.Function {
	return function.New(&function.Spec{
		Description: name + " is disabled here",
		VarParam:    &function.Parameter{Name: "args", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true},
		Type:        function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			return cty.DynamicVal, errFilesystem
		},
	})
}

// indexFunc is Nomad's index(list, value): the position of the first
// element equal to value, an error when there is none. go-cty's
// stdlib.IndexFunc is a different function (the element at a key), which
// Nomad's documentation does not describe.
var indexFunc = function.New(&function.Spec{
	Description: "Returns the index of the first element of list equal to value.",
	Params: []function.Parameter{
		{Name: "list", Type: cty.DynamicPseudoType},
		{Name: "value", Type: cty.DynamicPseudoType},
	},
	Type: function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		list, value := args[0], args[1]
		if t := list.Type(); !(t.IsListType() || t.IsTupleType()) {
			return cty.NilVal, function.NewArgErrorf(0, "must be a list or tuple (got %s)", t.FriendlyName())
		}
		if !list.IsWhollyKnown() || !value.IsKnown() {
			return cty.UnknownVal(cty.Number), nil
		}
		for i, e := range list.AsValueSlice() {
			if e.Type().Equals(value.Type()) || e.Type() == cty.DynamicPseudoType {
				if eq := e.Equals(value); eq.IsKnown() && eq.True() {
					return cty.NumberIntVal(int64(i)), nil
				}
			}
		}
		return cty.NilVal, errors.New("item not found")
	},
})

// now is the clock of timestamp(); tests replace it.
var now = time.Now

// timestampFunc is Nomad's timestamp(): the time of the parse in UTC, in
// RFC 3339 form.
var timestampFunc = function.New(&function.Spec{
	Description: "Returns the current time in UTC as an RFC 3339 string.",
	Type:        function.StaticReturnType(cty.String),
	Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
		return cty.StringVal(now().UTC().Format(time.RFC3339)), nil
	},
})

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
		if root == "var" || root == "local" || !(runtimeRoot.MatchString(root) || d.extraRoots[root]) {
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
