package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() { registerJobCommand("deployments", newJobDeploymentsCommand) }

func newJobDeploymentsCommand() *cobra.Command {
	var f opFlags
	var latest, all bool
	cmd := &cobra.Command{
		Use:   "deployments [flags] JOB",
		Short: "List a job's deployments, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			jobID, err := resolveJobID(cmd.Context(), c, w, args[0])
			if err != nil {
				return err
			}
			if latest {
				d, _, err := c.Jobs().LatestDeployment(cmd.Context(), jobID, nil)
				if err != nil {
					return fmt.Errorf("retrieving the job's deployment: %w", err)
				}
				if ok, err := f.formatted(cmd, d); ok {
					return err
				}
				if d == nil {
					fmt.Fprintf(w, "Job %q has no deployment\n", jobID)
					return nil
				}
				f.printDeploymentStatus(w, d)
				return nil
			}
			deps, _, err := c.Jobs().Deployments(cmd.Context(), jobID, all, nil)
			if err != nil {
				return fmt.Errorf("retrieving the job's deployments: %w", err)
			}
			if deps == nil {
				deps = []*structs.Deployment{}
			}
			if ok, err := f.formatted(cmd, deps); ok {
				return err
			}
			if len(deps) == 0 {
				fmt.Fprintf(w, "Job %q has no deployments\n", jobID)
				return nil
			}
			f.printDeployments(w, deps)
			return nil
		},
	}
	cmd.Flags().BoolVar(&latest, "latest", false, "show only the latest deployment, in full")
	cmd.Flags().BoolVar(&all, "all", false, "include deployments of an earlier job with the same ID")
	f.addAddress(cmd)
	f.addVerbose(cmd)
	f.addJSON(cmd)
	return cmd
}
