package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

func init() { raftCommands["remove-peer"] = newRaftRemovePeerCommand }

// newRaftRemovePeerCommand is "drover operator raft remove-peer": drop a
// server from the Raft configuration, by ID or by Raft address, as Nomad.
func newRaftRemovePeerCommand() *cobra.Command {
	var address, peerID, peerAddr string
	cmd := &cobra.Command{
		Use:   "remove-peer",
		Short: "Remove a server from the Raft configuration",
		Long: `Remove a server from the Raft configuration. Use it for a server that died
and will not come back, before its replacement joins: the dead server still
counts towards the quorum until it is removed. Give exactly one of -peer-id
(the server's Raft ID, see "drover operator raft list-peers") or
-peer-address (its Raft address, host:port).

  drover operator raft remove-peer -peer-address 10.0.0.3:4647`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (peerID == "") == (peerAddr == "") {
				return errors.New("give exactly one of -peer-id or -peer-address")
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if peerID != "" {
				if err := c.Operator().RaftRemovePeerByID(cmd.Context(), peerID); err != nil {
					return fmt.Errorf("removing peer: %w", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Removed peer with id %q\n", peerID)
				return nil
			}
			if err := c.Operator().RaftRemovePeerByAddress(cmd.Context(), peerAddr); err != nil {
				return fmt.Errorf("removing peer: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed peer with address %q\n", peerAddr)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().StringVar(&peerID, "peer-id", "", "Raft ID of the server to remove")
	cmd.Flags().StringVar(&peerAddr, "peer-address", "", "Raft address (host:port) of the server to remove")
	return cmd
}
