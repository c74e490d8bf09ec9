package main

import (
	"github.com/spf13/cobra"
)

// newRootCommand builds the command tree. Each subcommand lives in its own
// file and is added here.
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
	root.AddCommand(
		newVersionCommand(),
		newJobCommand(),
	)
	return root
}

// newJobCommand groups the job subcommands.
func newJobCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "job",
		Short: "Validate, inspect, run and manage jobs",
	}
	return cmd
}
