package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// "drover server force-leave [-prune] <node>", as Nomad's: the leader
// takes the server out of the Raft configuration and keeps it out until
// it is joined again (agent/force_leave.go).

func init() { registerSubcommand("server force-leave", newServerForceLeaveCommand) }

func newServerForceLeaveCommand() *cobra.Command {
	var address string
	var prune bool
	cmd := &cobra.Command{
		Use:   "force-leave [-prune] <node>",
		Short: "Force a server out of the cluster",
		Long: `Force the server named <node> (its member name, such as "node-1.global",
its node name or its Raft ID, as drover server members lists them) out of the
cluster: the leader removes it from the Raft configuration and refuses its
joins until it is joined again by address (drover server join). It stays in
drover server members as "leaving" while it answers, "left" once it does
not; -prune drops it from that list at once.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &exitError{code: 1, msg: "This command takes one argument: <node>"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if err := c.AgentForceLeave(cmd.Context(), args[0], prune); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error force-leaving server %s: %v", args[0], err)}
			}
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&prune, "prune", false, "also drop the server from the member list at once")
	return cmd
}
