package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
)

func init() { registerJobCommand("revert", newJobRevertCommand) }

func newJobRevertCommand() *cobra.Command {
	var f opFlags
	cmd := &cobra.Command{
		Use:   "revert [flags] JOB VERSION",
		Short: "Register an earlier version of a job again, as a new version",
		Long: `Registers the given version's specification again; the job gets a new
version number and rolls out like any other change. Without -detach the
job's deployment is shown once after the revert; with it, the evaluation ID.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			version, err := strconv.ParseUint(args[1], 10, 64)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("The job version to revert to must be a number: %q", args[1])}
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			jobID, err := resolveJobID(cmd.Context(), c, w, args[0])
			if err != nil {
				return err
			}
			resp, err := c.Jobs().Revert(cmd.Context(), jobID, version, nil)
			if err != nil {
				return verbError("reverting job", err)
			}
			if f.detach {
				fmt.Fprintf(w, "Evaluation ID: %s\n", f.short(resp.EvalID))
				return nil
			}
			fmt.Fprintf(w, "Job %q reverted to version %d (now version %d)\n", jobID, version, resp.JobVersion)
			fmt.Fprintf(w, "Evaluation ID: %s\n", f.short(resp.EvalID))
			q := &apiclient.QueryOptions{WaitTime: 5 * time.Second}
			if resp.Index > 1 {
				q.WaitIndex = resp.Index - 1
			}
			d, _, err := c.Jobs().LatestDeployment(cmd.Context(), jobID, q)
			if err != nil {
				return fmt.Errorf("retrieving the job's deployment: %w", err)
			}
			if d != nil && d.JobVersion == resp.JobVersion {
				fmt.Fprintln(w)
				f.printDeploymentStatus(w, d)
			}
			return nil
		},
	}
	f.addAddress(cmd)
	f.addVerbose(cmd)
	f.addDetach(cmd)
	return cmd
}
