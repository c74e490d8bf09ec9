package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { registerJobCommand("stop", newJobStopCommand) }

func newJobStopCommand() *cobra.Command {
	var (
		address       string
		purge, detach bool
		verbose, yes  bool
		global        bool
	)
	cmd := &cobra.Command{
		Use:   "stop [flags] JOB",
		Short: "Stop a job, or purge it with its history",
		Long: `Stops the job (a new, stopped version; its allocations are stopped and a
running deployment is cancelled) or, with -purge, deletes it and its
version history. The job may be named by a unique ID prefix. Unless
-detach is given, the evaluation is monitored to its end. A multi-region
job is stopped in this region only, or with -global in every region it
names.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			job, err := lookupJob(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			resp, err := deregisterJob(cmd, c, job.ID, purge, global) // job_multiregion.go
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error deregistering job: %v", err)}
			}
			if detach {
				fmt.Fprintf(out, "Evaluation ID: %s\n", resp.EvalID)
				return nil
			}
			m := newMonitor(c, out, false)
			m.verbose = verbose
			code, err := m.run(ctx, resp.EvalID)
			return monitorExit("the job", code, err)
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&purge, "purge", false, "delete the job and its history instead of stopping it")
	cmd.Flags().BoolVar(&detach, "detach", false, "return at once, printing the evaluation ID")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full IDs")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation: drover's job stop never asks")
	cmd.Flags().BoolVar(&global, "global", false, "stop a multi-region job in every region it names (without it, in this region only)")
	return cmd
}
