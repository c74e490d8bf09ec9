package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { registerSubcommand("server join", newServerJoinCommand) }

// newServerJoinCommand is "drover server join ADDRESS...", as Nomad's: the
// server at -address joins the servers at the addresses given (host:port of
// their HTTP API). A server of another region federates the two regions.
func newServerJoinCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "join <address> [<address>...]",
		Short: "Join the server at -address to other servers, of its region or of another",
		Long: `Join the server at -address to the servers at the addresses given (host:port
of their HTTP API). A server of the same region is exchanged with from then
on, as a -retry-join address; a server of another region federates the two
regions: each keeps its own Raft and state, requests with -region are
forwarded between them, and /v1/regions lists both. Both sides check the
join with server.join_token, which federated regions share.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			n, err := c.AgentJoin(cmd.Context(), args)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error joining: %v", err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Joined %d servers successfully\n", n)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}
