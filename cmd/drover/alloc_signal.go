package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/drivers"
)

func init() { allocCommands["signal"] = newAllocSignalCommand }

func newAllocSignalCommand() *cobra.Command {
	var address, task, sig string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "signal [flags] ALLOC [TASK]",
		Short: "Send a signal to an allocation's tasks",
		Long: `Sends a signal (-s, SIGKILL by default, as Nomad's) to a task of the
allocation (ID or unique prefix), on the node that runs it; the task's
events record it ("Signaling"). The task is -task or the second
argument; without one, every running task of the allocation gets it.
raw_exec signals the task's process, docker the container's. It prints
nothing and exits 0 once the signal is sent.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			task, err := taskArg(task, args)
			if err != nil {
				return err
			}
			if _, err := drivers.ParseSignal(sig); err != nil || sig == "" {
				return &exitError{code: 1, msg: fmt.Sprintf("Unknown signal %q", sig)}
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
			if err := c.Allocations().Signal(ctx, a.ID, task, sig); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error signalling allocation: %v", err)}
			}
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full IDs when a prefix matches several allocations")
	cmd.Flags().StringVar(&task, "task", "", "the task to signal (default: every running task)")
	cmd.Flags().StringVarP(&sig, "s", "s", "SIGKILL", "the signal to send, such as SIGUSR1 or HUP")
	return cmd
}
