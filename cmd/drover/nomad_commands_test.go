package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/internal/nomadcompat"
)

// droverCommands walks the command tree and returns the path after
// "drover" of every command that runs (cobra's own help and completion
// commands aside).
func droverCommands() map[string]bool {
	out := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if c.HasParent() && c.Runnable() {
			out[strings.TrimPrefix(c.CommandPath(), "drover ")] = true
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCommand())
	return out
}

// TestNomadCommandTable keeps the CLI part of website/nomad-compatibility.md
// true: every command the table marks supported is a command of drover,
// every command of drover is in the table, marked supported (or listed
// as drover's own), and no command is listed twice.
func TestNomadCommandTable(t *testing.T) {
	have := droverCommands()
	listed := map[string]bool{}
	for _, c := range append(append([]nomadcompat.Command{}, nomadcompat.Commands...), nomadcompat.DroverOnly...) {
		if listed[c.Path] {
			t.Errorf("%q is listed twice", c.Path)
		}
		listed[c.Path] = true
		switch c.Status {
		case nomadcompat.Supported:
			if !have[c.Path] {
				t.Errorf("the table says drover supports %q, but drover has no such command", c.Path)
			}
		case nomadcompat.NotSupported:
			if have[c.Path] {
				t.Errorf("drover has the command %q, but the table says it is not supported", c.Path)
			}
		case nomadcompat.NotYet:
			if !have[c.Path] || notYet[c.Path] == "" {
				t.Errorf("the table says drover refuses %q with a reason, but drover has no such command in not_yet.go", c.Path)
			}
		default:
			t.Errorf("%q: unknown status %q", c.Path, c.Status)
		}
	}
	var missing []string
	for p := range have {
		if !listed[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		t.Errorf("drover's command %q is not in internal/nomadcompat (mark Nomad's row supported, or list it in DroverOnly; then go test ./jobspec -update)", p)
	}
	if len(have) < 10 {
		t.Fatalf("found only %d commands in the tree: %v", len(have), have)
	}
}
