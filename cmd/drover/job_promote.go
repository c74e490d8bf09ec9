package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
)

func init() { registerJobCommand("promote", newJobPromoteCommand) }

func newJobPromoteCommand() *cobra.Command {
	var p promoteFlags
	cmd := &cobra.Command{
		Use:   "promote [flags] JOB",
		Short: "Promote the canaries of a job's latest deployment",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := p.client()
			if err != nil {
				return err
			}
			jobID, err := resolveJobID(cmd.Context(), c, cmd.OutOrStdout(), args[0])
			if err != nil {
				return err
			}
			d, _, err := c.Jobs().LatestDeployment(cmd.Context(), jobID, nil)
			if err != nil {
				return fmt.Errorf("retrieving the job's deployment: %w", err)
			}
			if d == nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Job %q has no deployment to promote", jobID)}
			}
			return p.promote(cmd, c, d)
		},
	}
	p.register(cmd)
	return cmd
}

// resolveJobID returns the ID of the job named by id or by a unique ID
// prefix; several matches are printed and fail with exit code 1.
func resolveJobID(ctx context.Context, c *apiclient.Client, w io.Writer, id string) (string, error) {
	jobs, _, err := c.Jobs().List(ctx, &apiclient.QueryOptions{Prefix: id})
	if err != nil {
		return "", fmt.Errorf("retrieving jobs: %w", err)
	}
	for _, j := range jobs {
		if j.ID == id {
			return id, nil
		}
	}
	switch len(jobs) {
	case 0:
		return "", &exitError{code: 1, msg: fmt.Sprintf("No job(s) with prefix or id %q found", id)}
	case 1:
		return jobs[0].ID, nil
	}
	fmt.Fprintf(w, "Prefix matched multiple jobs\n\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tType\tPriority\tStatus")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", j.ID, j.Type, j.Priority, j.Status)
	}
	_ = tw.Flush()
	return "", exitCode(1)
}
