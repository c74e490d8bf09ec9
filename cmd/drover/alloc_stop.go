package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { allocCommands["stop"] = newAllocStopCommand }

func newAllocStopCommand() *cobra.Command {
	var verbose bool
	var (
		address         string
		detach          bool
		noShutdownDelay bool
	)
	cmd := &cobra.Command{
		Use:   "stop [flags] ALLOC",
		Short: "Stop an allocation and have it replaced",
		Long: `Stops the allocation (ID or unique prefix) and has the scheduler replace it,
as Nomad's alloc stop: the allocation is marked for migration and an
evaluation of its job placed; the job keeps its count. Its client waits
the group's and the tasks' shutdown_delay before the kill, unless
-no-shutdown-delay is given. Unless -detach is given, the evaluation is
monitored to its end, as by job run; with -detach the evaluation's ID is
printed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			a, err := lookupAlloc(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			resp, err := c.Allocations().StopWith(ctx, a.ID, noShutdownDelay)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error stopping allocation: %v", err)}
			}
			if detach {
				fmt.Fprintln(out, resp.EvalID)
				return nil
			}
			m := newMonitor(c, out, false)
			m.verbose = verbose
			code, err := m.run(ctx, resp.EvalID)
			return monitorExit("the evaluation", code, err)
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full IDs")
	cmd.Flags().BoolVar(&detach, "detach", false, "return at once, printing the evaluation ID")
	cmd.Flags().BoolVar(&noShutdownDelay, "no-shutdown-delay", false, "stop without the group's and the tasks' shutdown_delay")
	return cmd
}
