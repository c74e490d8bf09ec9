package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() { registerCommand("operator", newOperatorCommand) }

// Further subcommands of "operator" and "operator raft" register from
// their own files' init functions.
var (
	operatorCommands = map[string]func() *cobra.Command{}
	raftCommands     = map[string]func() *cobra.Command{}
)

func newOperatorCommand() *cobra.Command {
	op := &cobra.Command{Use: "operator", Short: "Operate the cluster's servers"}
	rft := &cobra.Command{Use: "raft", Short: "Inspect the Raft configuration"}
	rft.AddCommand(newRaftListPeersCommand())
	addSorted(rft, raftCommands)
	op.AddCommand(rft)
	addSorted(op, operatorCommands)
	return op
}

func newRaftListPeersCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "list-peers",
		Short: "List the servers of the Raft configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			cfg, err := c.Operator().RaftConfiguration(cmd.Context())
			if err != nil {
				return fmt.Errorf("reading the Raft configuration: %w", err)
			}
			// The leader's autopilot adds each server's log index and
			// health; "-" where it has none (no leader, or not yet).
			health := map[string]structs.ServerHealth{}
			if h, err := c.Operator().AutopilotHealth(cmd.Context()); err == nil {
				for _, s := range h.Servers {
					health[s.ID] = s
				}
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "Node\tID\tAddress\tState\tVoter\tRaftProtocol\tLastIndex\tHealth")
			for _, s := range cfg.Servers {
				st := "follower"
				if s.Leader {
					st = "leader"
				}
				index, healthy := "-", "-"
				if h, ok := health[s.ID]; ok {
					healthy = "unhealthy"
					if h.Healthy {
						healthy = "healthy"
					}
					if h.SerfStatus == "alive" {
						index = fmt.Sprint(h.LastIndex)
					}
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%t\t%s\t%s\t%s\n", s.Node, s.ID, s.Address, st, s.Voter, s.RaftProtocol, index, healthy)
			}
			return w.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().Bool("stale", false, "accepted as Nomad's: any server answers from its own Raft configuration")
	return cmd
}
