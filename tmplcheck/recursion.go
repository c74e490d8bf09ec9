package tmplcheck

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/template/parse"
)

// Sentinel errors of Recursion.
var (
	// ErrRecursion: a template's definitions call one another in a cycle.
	ErrRecursion = errors.New("a template may not recurse, it could exhaust the client's stack")
	// ErrDynamicTemplateName: executeTemplate is called with a name
	// that is not a constant string, so a cycle could not be seen.
	ErrDynamicTemplateName = errors.New("executeTemplate's name must be a constant string")
)

// Recursion refuses a template whose definitions call one another
// in a cycle, through the template action (or block) or, when the
// client lets templates call it (exec), executeTemplate. Go's engine
// bounds the depth of template actions (100,000) but not the stack each
// level takes, and executeTemplate starts that count again: either can
// exhaust the client's stack, which no recover catches — the agent dies.
// With executeTemplate allowed, its name must be a constant string, or
// the cycle could not be seen.
//
// Text that does not parse is left to the engine, which reports where.
func Recursion(text, left, right string, exec bool) error {
	t := parse.New("")
	t.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(text, left, right, trees); err != nil {
		return nil
	}
	type call struct{ to, via string }
	calls := map[string][]call{}
	names := make([]string, 0, len(trees))
	for name := range trees {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tr := trees[name]
		var bad error
		walkNodes(tr.Root, func(n parse.Node) {
			switch n := n.(type) {
			case *parse.TemplateNode:
				calls[name] = append(calls[name], call{n.Name, fmt.Sprintf("template %q", n.Name)})
			case *parse.CommandNode:
				id, ok := n.Args[0].(*parse.IdentifierNode)
				if !exec || !ok || id.Ident != "executeTemplate" {
					return
				}
				if len(n.Args) < 2 {
					bad = fmt.Errorf("%s: %w", location(tr, n), ErrDynamicTemplateName)
					return
				}
				s, ok := n.Args[1].(*parse.StringNode)
				if !ok {
					bad = fmt.Errorf("%s: %w, not %s", location(tr, n), ErrDynamicTemplateName, n.Args[1])
					return
				}
				calls[name] = append(calls[name], call{s.Text, fmt.Sprintf("executeTemplate %q", s.Text)})
			}
		})
		if bad != nil {
			return bad
		}
	}
	// A depth-first search for a cycle, in a stable order.
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	// stack holds the definitions being visited, vias[i] the call from
	// stack[i] to stack[i+1].
	var stack, vias []string
	var visit func(name string) error
	visit = func(name string) error {
		state[name] = onPath
		stack = append(stack, name)
		for _, c := range calls[name] {
			if _, defined := trees[c.to]; !defined {
				continue
			}
			switch state[c.to] {
			case onPath:
				k := len(stack) - 1
				for stack[k] != c.to {
					k--
				}
				cycle := append(append([]string(nil), vias[k:]...), c.via)
				return fmt.Errorf("%s calls itself (%s): %w",
					display(c.to), strings.Join(cycle, " → "), ErrRecursion)
			case unseen:
				vias = append(vias, c.via)
				if err := visit(c.to); err != nil {
					return err
				}
				vias = vias[:len(vias)-1]
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = done
		return nil
	}
	for _, name := range names {
		if state[name] == unseen {
			if err := visit(name); err != nil {
				return err
			}
		}
	}
	return nil
}

func display(name string) string {
	if name == "" {
		return "the template"
	}
	return fmt.Sprintf("template %q", name)
}

func location(tr *parse.Tree, n parse.Node) string {
	loc, _ := tr.ErrorContext(n)
	return loc
}

// walkNodes calls f on n and every node under it.
func walkNodes(n parse.Node, f func(parse.Node)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		f(n)
		for _, c := range n.Nodes {
			walkNodes(c, f)
		}
	case *parse.ActionNode:
		f(n)
		walkNodes(n.Pipe, f)
	case *parse.IfNode:
		f(n)
		walkBranchNodes(&n.BranchNode, f)
	case *parse.RangeNode:
		f(n)
		walkBranchNodes(&n.BranchNode, f)
	case *parse.WithNode:
		f(n)
		walkBranchNodes(&n.BranchNode, f)
	case *parse.TemplateNode:
		f(n)
		walkNodes(n.Pipe, f)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		f(n)
		for _, c := range n.Cmds {
			walkNodes(c, f)
		}
	case *parse.CommandNode:
		f(n)
		for _, a := range n.Args {
			walkNodes(a, f)
		}
	case *parse.ChainNode:
		f(n)
		walkNodes(n.Node, f)
	case nil:
	default:
		f(n)
	}
}

func walkBranchNodes(b *parse.BranchNode, f func(parse.Node)) {
	walkNodes(b.Pipe, f)
	walkNodes(b.List, f)
	walkNodes(b.ElseList, f)
}
