package main

import (
	"fmt"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
)

func newServiceDeleteCommand() *cobra.Command {
	var f serviceFlags
	cmd := &cobra.Command{
		Use:   "delete [flags] NAME ID",
		Short: "Delete one registration of a service",
		Long: `Deletes the registration ID of the service NAME in the namespace. The servers
derive registrations from the allocations: one of an allocation still
running comes back when they next recompute it (the allocation stops and
runs again, is promoted, moves, or its node's address changes), not at
its client's repeated reports.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			path := "/v1/service/" + url.PathEscape(args[0]) + "/" + url.PathEscape(args[1])
			if _, err := c.Delete(cmd.Context(), path, &apiclient.QueryOptions{Namespace: f.ns(cmd)}, nil); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error deleting service registration: %v", err)}
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Successfully deleted service registration")
			return nil
		},
	}
	f.addAddress(cmd)
	f.addNamespace(cmd)
	return cmd
}
