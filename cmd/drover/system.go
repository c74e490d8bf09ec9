package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// "drover system gc" and "drover system reconcile summaries", as Nomad's
// (PUT /v1/system/gc, /v1/system/reconcile/summaries).

func init() {
	groupShorts["system"] = "Garbage collection and summary reconciliation"
	groupShorts["system reconcile"] = "Reconcile the job summaries"
	registerSubcommand("system gc", func() *cobra.Command {
		return newSystemPutCommand("gc", "Collect terminal allocations, evaluations, deployments, done jobs and down nodes now",
			"/v1/system/gc", "Error running system garbage-collection")
	})
	registerSubcommand("system reconcile summaries", func() *cobra.Command {
		return newSystemPutCommand("summaries", "Reconcile the job summaries (drover keeps them with every write: nothing to do)",
			"/v1/system/reconcile/summaries", "Error running system summary reconciliation")
	})
}

func newSystemPutCommand(use, short, path, failed string) *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if _, err := c.Put(cmd.Context(), path, nil, nil); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("%s: %v", failed, err)}
			}
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}
