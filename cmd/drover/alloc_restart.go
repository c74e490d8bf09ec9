package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { allocCommands["restart"] = newAllocRestartCommand }

func newAllocRestartCommand() *cobra.Command {
	var verbose bool
	var (
		address, task string
		allTasks      bool
	)
	cmd := &cobra.Command{
		Use:   "restart [flags] ALLOC [TASK]",
		Short: "Restart an allocation's tasks in place",
		Long: `Restarts a task of the allocation (ID or unique prefix) in place, on the
node that runs it, as Nomad's alloc restart: the task is stopped with its
kill signal and timeout and started again at once, the restart not
counted against its restart policy. The task is -task or the second
argument; without one (or with -all-tasks) every running task of the
allocation restarts. It prints nothing and exits 0 once the tasks have
been stopped.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			task, err := taskArg(task, args)
			if err != nil {
				return err
			}
			if allTasks && task != "" {
				return &exitError{code: 1, msg: "The -all-tasks option cannot be used with a task name"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			a, task, err := runningAlloc(ctx, c, cmd.OutOrStdout(), args[0], task, verbose)
			if err != nil {
				return err
			}
			if err := c.Allocations().Restart(ctx, a.ID, task, allTasks); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to restart allocation: %v", err)}
			}
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full IDs when a prefix matches several allocations")
	cmd.Flags().StringVar(&task, "task", "", "the task to restart (default: every running task)")
	cmd.Flags().BoolVar(&allTasks, "all-tasks", false, "restart every running task of the allocation")
	return cmd
}
