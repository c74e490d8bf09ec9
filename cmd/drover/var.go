package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"text/template"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/spf13/cobra"
	"github.com/zclconf/go-cty/cty"
	"golang.org/x/term"

	"github.com/droverhq/drover/structs"
)

func init() { registerCommand("var", newVarCommand) }

// newVarCommand is "drover var": Nomad's variables commands
// (website/commands/var.md).
func newVarCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "var", Short: "Create, read, list and purge variables"}
	cmd.AddCommand(newVarInitCommand(), newVarPutCommand(), newVarGetCommand(), newVarListCommand(), newVarPurgeCommand())
	return cmd
}

// Output formats of var get and var put (-out), Nomad's names.
var varOutFormats = []string{"go-template", "hcl", "json", "none", "table"}

// defaultVarOut is Nomad's default -out: def on a terminal, json when the
// output is redirected.
func defaultVarOut(w io.Writer, def string) string {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return def
	}
	return "json"
}

func checkOutFormat(out, tmpl string) error {
	if !slices.Contains(varOutFormats, out) {
		return &exitError{code: 1, msg: fmt.Sprintf("Invalid -out value %q: one of %s", out, strings.Join(varOutFormats, ", "))}
	}
	if (out == "go-template") != (tmpl != "") {
		return &exitError{code: 1, msg: `A template must be given with -template when -out is "go-template", and only then`}
	}
	return nil
}

// formatTime is Nomad's rendering of a Unix-nanosecond time.
func formatTime(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339)
}

// printVariable renders v in format (see varOutFormats).
func printVariable(w io.Writer, v *structs.Variable, format, tmpl string) error {
	switch format {
	case "none":
		return nil
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	case "hcl":
		_, err := w.Write(variableHCL(v))
		return err
	case "go-template":
		return renderTemplate(w, tmpl, v)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "Namespace\t= %s\n", v.Namespace)
	fmt.Fprintf(tw, "Path\t= %s\n", v.Path)
	fmt.Fprintf(tw, "Create Time\t= %s\n", formatTime(v.CreateTime))
	if v.ModifyTime != v.CreateTime {
		fmt.Fprintf(tw, "Modify Time\t= %s\n", formatTime(v.ModifyTime))
	}
	fmt.Fprintf(tw, "Check Index\t= %d\n", v.ModifyIndex)
	tw.Flush()
	fmt.Fprintln(w, "\nItems")
	tw = tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	keys := make([]string, 0, len(v.Items))
	for k := range v.Items {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t= %s\n", k, v.Items[k])
	}
	return tw.Flush()
}

// variableHCL renders v as a variable specification, the form var put
// reads back.
func variableHCL(v *structs.Variable) []byte {
	f := hclwrite.NewEmptyFile()
	b := f.Body()
	b.SetAttributeValue("namespace", cty.StringVal(v.Namespace))
	b.SetAttributeValue("path", cty.StringVal(v.Path))
	b.SetAttributeValue("create_index", cty.NumberUIntVal(v.CreateIndex))
	b.SetAttributeValue("modify_index", cty.NumberUIntVal(v.ModifyIndex))
	b.SetAttributeValue("create_time", cty.NumberIntVal(v.CreateTime))
	b.SetAttributeValue("modify_time", cty.NumberIntVal(v.ModifyTime))
	b.AppendNewline()
	keys := make([]string, 0, len(v.Items))
	identifiers := true
	for k := range v.Items {
		keys = append(keys, k)
		identifiers = identifiers && hclIdentifier(k)
	}
	slices.Sort(keys)
	if !identifiers {
		// Keys such as "db.user" are not attribute names: a map.
		m := map[string]cty.Value{}
		for _, k := range keys {
			m[k] = cty.StringVal(v.Items[k])
		}
		b.SetAttributeValue("items", cty.MapVal(m))
		return f.Bytes()
	}
	items := b.AppendNewBlock("items", nil).Body()
	for _, k := range keys {
		items.SetAttributeValue(k, cty.StringVal(v.Items[k]))
	}
	return f.Bytes()
}

// hclIdentifier reports whether s can be an HCL attribute name as is.
func hclIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r == '-' || r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// varSpecSchema is a variable specification in HCL (var put, var init):
// namespace, path, the indexes and times var get -out hcl writes, and
// the items, as a block or (keys that are not identifiers) a map.
var varSpecSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "namespace"}, {Name: "path"}, {Name: "create_index"}, {Name: "modify_index"},
		{Name: "create_time"}, {Name: "modify_time"}, {Name: "items"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "items"}},
}

// parseVarSpec reads a specification in format ("hcl" or "json"), and
// whether it states a modify index.
func parseVarSpec(name string, src []byte, format string) (*structs.Variable, bool, error) {
	if format == "json" {
		var v struct {
			structs.Variable
			ModifyIndex *uint64
		}
		if err := json.Unmarshal(src, &v); err != nil {
			return nil, false, fmt.Errorf("%s: %w", name, err)
		}
		out := v.Variable
		if v.ModifyIndex != nil {
			out.ModifyIndex = *v.ModifyIndex
		}
		return &out, v.ModifyIndex != nil, nil
	}
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, false, diags
	}
	content, diags := f.Body.Content(varSpecSchema)
	if diags.HasErrors() {
		return nil, false, diags
	}
	v := &structs.Variable{Items: structs.VariableItems{}}
	str := func(attr string, dst *string) error {
		if a := content.Attributes[attr]; a != nil {
			if diags := gohcl.DecodeExpression(a.Expr, nil, dst); diags.HasErrors() {
				return diags
			}
		}
		return nil
	}
	if err := str("namespace", &v.Namespace); err != nil {
		return nil, false, err
	}
	if err := str("path", &v.Path); err != nil {
		return nil, false, err
	}
	hasIndex := false
	if a := content.Attributes["modify_index"]; a != nil {
		if diags := gohcl.DecodeExpression(a.Expr, nil, &v.ModifyIndex); diags.HasErrors() {
			return nil, false, diags
		}
		hasIndex = true
	}
	if a := content.Attributes["items"]; a != nil {
		var m map[string]string
		if diags := gohcl.DecodeExpression(a.Expr, nil, &m); diags.HasErrors() {
			return nil, false, diags
		}
		maps.Copy(v.Items, m)
	}
	for _, b := range content.Blocks {
		attrs, diags := b.Body.JustAttributes()
		if diags.HasErrors() {
			return nil, false, diags
		}
		for k, a := range attrs {
			var val string
			if diags := gohcl.DecodeExpression(a.Expr, nil, &val); diags.HasErrors() {
				return nil, false, diags
			}
			v.Items[k] = val
		}
	}
	return v, hasIndex, nil
}

// renderTemplate renders v with a Go template (-out go-template).
func renderTemplate(w io.Writer, tmpl string, v any) error {
	t, err := template.New("format").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error formatting the data: %v", err)}
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error formatting the data: %v", err)}
	}
	_, err = w.Write(b.Bytes())
	return err
}
