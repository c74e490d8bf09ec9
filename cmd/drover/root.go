package main

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// Each subcommand lives in its own file and registers its constructor from
// an init function, so that adding a command touches one file only.
var (
	topCommands = map[string]func() *cobra.Command{}
	jobCommands = map[string]func() *cobra.Command{}
)

// registerCommand adds a top-level command ("drover NAME").
func registerCommand(name string, f func() *cobra.Command) { topCommands[name] = f }

// registerJobCommand adds a job subcommand ("drover job NAME").
func registerJobCommand(name string, f func() *cobra.Command) { jobCommands[name] = f }

// newRootCommand builds a fresh command tree (fresh flags each time, so tests
// can run commands in-process one after another).
func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "drover",
		Short: "Drover runs jobs across a fleet and rolls out new versions safely",
		Long: `Drover places a job's allocations on client nodes and replaces them in
controlled, health-gated batches: canaries first, promoted or failed by hand
or automatically, rolled back to the last stable version when things go wrong.

Flags may be written with one dash, as in Nomad: drover job run -detach app.hcl`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	job := &cobra.Command{Use: "job", Short: "Validate, inspect, run and manage jobs"}
	addSorted(job, jobCommands)
	root.AddCommand(job)
	addSorted(root, topCommands)
	addSubcommands(root)
	completeNomadFlags(root)
	return root
}

// subcommands are commands registered by their full path ("node pool
// list"), under parents made as needed; groupShorts describe those
// parents.
var (
	subcommands = map[string]func() *cobra.Command{}
	groupShorts = map[string]string{}
)

// registerSubcommand adds the command at path (after "drover"); its
// parents are the commands of those names, made when no file makes them.
func registerSubcommand(path string, f func() *cobra.Command) { subcommands[path] = f }

func addSubcommands(root *cobra.Command) {
	paths := make([]string, 0, len(subcommands))
	for p := range subcommands {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		words := strings.Fields(p)
		parent := root
		for i, w := range words[:len(words)-1] {
			var next *cobra.Command
			for _, c := range parent.Commands() {
				if c.Name() == w {
					next = c
				}
			}
			if next == nil {
				next = &cobra.Command{Use: w, Short: groupShorts[strings.Join(words[:i+1], " ")]}
				parent.AddCommand(next)
			}
			parent = next
		}
		parent.AddCommand(subcommands[p]())
	}
}

func addSorted(parent *cobra.Command, cmds map[string]func() *cobra.Command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		parent.AddCommand(cmds[n]())
	}
}
