// Package tmplcheck judges a task template's text before any client runs
// it: its syntax, and each function it calls against the engine's set
// (consul-template's) and the functions drover refuses, those that read
// Consul or Vault. Job validation uses it; the client agent uses Refused
// to make the refused functions fail at render time as well.
package tmplcheck

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"text/template/parse"

	"github.com/agext/levenshtein"
	cttemplate "github.com/hashicorp/consul-template/template"
)

// Sentinel errors; Check wraps them with the function's name.
var (
	// ErrSyntax: the template cannot be parsed.
	ErrSyntax = errors.New("template syntax error")
	// ErrUnknownFunction: the template calls a function the engine does
	// not define.
	ErrUnknownFunction = errors.New("unknown template function")
	// ErrRefusedFunction: the template calls a Consul or Vault function.
	ErrRefusedFunction = errors.New("template function not supported by drover")
)

// Refused are consul-template's functions that read Consul or Vault,
// with what they need; drover has neither.
var Refused = map[string]string{
	"datacenters":      "Consul",
	"exportedServices": "Consul",
	"key":              "Consul",
	"keyExists":        "Consul",
	"keyOrDefault":     "Consul",
	"ls":               "Consul",
	"safeLs":           "Consul",
	"node":             "Consul",
	"nodes":            "Consul",
	"partitions":       "Consul",
	"peerings":         "Consul",
	"service":          "Consul",
	"services":         "Consul",
	"connect":          "Consul",
	"tree":             "Consul",
	"safeTree":         "Consul",
	"caRoots":          "Consul",
	"caLeaf":           "Consul",
	"secret":           "Vault",
	"secrets":          "Vault",
	"pkiCert":          "Vault",
}

// RefusedFuncMap returns functions that replace the refused ones in the
// engine: each fails the render, naming itself.
func RefusedFuncMap() map[string]any {
	m := make(map[string]any, len(Refused))
	for name, what := range Refused {
		msg := fmt.Sprintf("%s: %s (it reads %s)", ErrRefusedFunction, name, what)
		m[name] = func(...any) (string, error) { return "", errors.New(msg) }
	}
	return m
}

// Check parses a template with the delimiters given ("" for the
// defaults), checks each function it calls and refuses a template that
// calls itself. The error wraps ErrSyntax, ErrUnknownFunction,
// ErrRefusedFunction or ErrRecursion.
func Check(text, left, right string) error {
	trees, err := parse.Parse("template", text, left, right, map[string]any{})
	if err != nil {
		// Without the engine's functions the parse fails at the first
		// call: parse again skipping that check to tell a syntax error
		// from an unknown name.
		t := parse.New("template")
		t.Mode = parse.SkipFuncCheck
		trees = map[string]*parse.Tree{}
		if _, err := t.Parse(text, left, right, trees); err != nil {
			return fmt.Errorf("%w: %s", ErrSyntax, strings.TrimPrefix(err.Error(), "template: "))
		}
	}
	names := map[string]bool{}
	for _, tree := range trees {
		if tree.Root != nil {
			walk(tree.Root, names)
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		if what, ok := Refused[n]; ok {
			return fmt.Errorf("%w: %q reads %s", ErrRefusedFunction, n, what)
		}
		if !Defined(n) {
			return fmt.Errorf("%w: %q%s", ErrUnknownFunction, n, suggest(n))
		}
	}
	// A cycle fails on every client: refused when the job is submitted.
	// Whether executeTemplate may take a computed name is the client's
	// to say (its function_denylist).
	if err := Recursion(text, left, right, true); err != nil && !errors.Is(err, ErrDynamicTemplateName) {
		return err
	}
	return nil
}

// walk collects the names of the functions a template calls.
func walk(n parse.Node, names map[string]bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, names)
		}
	case *parse.ActionNode:
		walk(n.Pipe, names)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walk(c, names)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walk(a, names)
		}
	case *parse.IdentifierNode:
		names[n.Ident] = true
	case *parse.ChainNode:
		walk(n.Node, names)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, names)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, names)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, names)
	case *parse.TemplateNode:
		walk(n.Pipe, names)
	}
}

func walkBranch(b *parse.BranchNode, names map[string]bool) {
	walk(b.Pipe, names)
	walk(b.List, names)
	if b.ElseList != nil {
		walk(b.ElseList, names)
	}
}

// defined caches the names the engine defines (a bounded set: names it
// lacks are asked again, so that job files cannot grow the cache).
var defined sync.Map // name → true

// builtins are text/template's own functions.
var builtins = map[string]bool{
	"and": true, "call": true, "html": true, "index": true, "slice": true, "js": true, "len": true,
	"not": true, "or": true, "print": true, "printf": true, "println": true, "urlquery": true,
	"eq": true, "ge": true, "gt": true, "le": true, "lt": true, "ne": true,
}

// Defined reports whether the engine defines a function name. It asks
// the engine itself: a template that names the function where it is
// never called parses only if the name is defined.
func Defined(name string) bool {
	if builtins[name] {
		return true
	}
	if _, ok := defined.Load(name); ok {
		return true
	}
	ok := false
	if isIdent(name) {
		t, err := cttemplate.NewTemplate(&cttemplate.NewTemplateInput{Contents: "{{if false}}{{" + name + "}}{{end}}"})
		if err == nil {
			_, err = t.Execute(&cttemplate.ExecuteInput{Brain: cttemplate.NewBrain()})
			ok = err == nil
		}
	}
	if ok {
		defined.Store(name, true)
	}
	return ok
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// common are the functions suggested for a misspelt name.
var common = []string{
	"env", "envOrDefault", "mustEnv", "file", "nomadVar", "nomadVarList", "nomadVarListSafe", "nomadVarExists",
	"nomadService", "nomadServices", "timestamp", "toJSON", "toJSONPretty", "parseJSON", "parseYAML", "toYAML",
	"toLower", "toUpper", "trimSpace", "split", "join", "replaceAll", "base64Encode", "base64Decode",
	"sockaddr", "scratch", "executeTemplate", "loop", "parseInt", "parseBool", "sha256Hex",
}

func suggest(name string) string {
	best, bestD := "", max(3, len(name)/2)
	for _, c := range common {
		if d := levenshtein.Distance(strings.ToLower(name), strings.ToLower(c), nil); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
