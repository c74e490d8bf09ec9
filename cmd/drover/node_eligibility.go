package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newNodeEligibilityCommand() *cobra.Command {
	var (
		address         string
		enable, disable bool
	)
	var self bool
	cmd := &cobra.Command{
		Use:   "eligibility [flags] -enable|-disable NODE",
		Short: "Make a node eligible or ineligible for new allocations",
		Long: `Sets whether the scheduler may place new allocations on a client node, as
Nomad's. An ineligible node keeps running what it runs (use node drain to
move it away). A draining node cannot be made eligible; a drain ends with
the node ineligible, and this command makes it eligible again. See
website/commands/node-eligibility.md.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := selfNode(cmd, address, self, args)
			if err != nil {
				return err
			}
			if enable == disable {
				return &exitError{code: 1, msg: "Either the '-enable' or '-disable' flag must be set"}
			}
			if len(args) != 1 {
				return &exitError{code: 1, msg: "This command takes one argument: <node-id>"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			node, err := lookupNode(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			if _, err := c.Nodes().ToggleEligibility(ctx, node.ID, enable); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error updating scheduling eligibility: %v", err)}
			}
			if enable {
				fmt.Fprintf(out, "Node %q scheduling eligibility set: eligible for scheduling\n", node.ID)
			} else {
				fmt.Fprintf(out, "Node %q scheduling eligibility set: ineligible for scheduling\n", node.ID)
			}
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&self, "self", false, "the node of the agent at -address")
	cmd.Flags().BoolVar(&enable, "enable", false, "make the node eligible for new allocations")
	cmd.Flags().BoolVar(&disable, "disable", false, "make the node ineligible for new allocations")
	return cmd
}
