package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
)

func newVarPurgeCommand() *cobra.Command {
	var address string
	var checkIndex uint64
	cmd := &cobra.Command{
		Use:   "purge [-check-index N] PATH",
		Short: "Delete a variable",
		Long: `Delete the variable at PATH; with -check-index, only if its modify index on
the servers is N.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			cas := cmd.Flags().Changed("check-index")
			err = c.VarDelete(cmd.Context(), namespaceOrDefault(cmd), args[0], cas, checkIndex)
			var conflict *apiclient.ErrCASConflict
			if errors.As(err, &conflict) {
				return casConflictError(checkIndex, conflict.Current)
			}
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error purging variable: %v", err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully purged variable %q!\n", args[0])
			return nil
		},
	}
	cmd.Flags().Uint64Var(&checkIndex, "check-index", 0, "delete only if the variable's modify index is this")
	addAddressFlag(cmd, &address)
	return cmd
}
