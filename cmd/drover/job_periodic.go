package main

import (
	"fmt"
	"net/url"

	"github.com/spf13/cobra"
)

func init() {
	registerJobCommand("periodic", func() *cobra.Command {
		cmd := &cobra.Command{Use: "periodic", Short: "Act on periodic jobs"}
		cmd.AddCommand(newJobPeriodicForceCommand())
		return cmd
	})
}

func newJobPeriodicForceCommand() *cobra.Command {
	var verbose bool
	var (
		address string
		detach  bool
	)
	cmd := &cobra.Command{
		Use:   "force [flags] JOB",
		Short: "Launch a periodic job's child now, whatever its schedule",
		Long: `Launches a child of the periodic job now, as its schedule would, even when
prohibit_overlap would skip it. Unless -detach is given, the child's
evaluation is monitored as job run monitors one.`,
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
			var resp struct {
				EvalID          string
				EvalCreateIndex uint64
				Index           uint64
			}
			if _, err := c.Put(ctx, "/v1/job/"+url.PathEscape(job.ID)+"/periodic/force", nil, &resp); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error forcing periodic job: %v", err)}
			}
			if detach || resp.EvalID == "" {
				fmt.Fprintf(out, "Force periodic successful\nEvaluation ID: %s\n", resp.EvalID)
				return nil
			}
			m := newMonitor(c, out, true)
			m.verbose = verbose
			code, err := m.run(ctx, resp.EvalID)
			return monitorExit("the launch", code, err)
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full IDs")
	cmd.Flags().BoolVar(&detach, "detach", false, "return at once, printing the evaluation ID")
	return cmd
}
