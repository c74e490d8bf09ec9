package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// deployment unblock, as Nomad's: makes a blocked multi-region deployment
// successful by hand.
func newDeploymentUnblockCommand() *cobra.Command {
	var f opFlags
	cmd := &cobra.Command{
		Use:   "unblock [flags] ID",
		Short: "Unblock a blocked deployment",
		Long: `Unblock is used to unblock a multiregion deployment that's waiting for
peer region deployments to complete: the deployment turns successful and its
job version stable.

When ACLs are enabled, this command requires a token with the 'submit-job'
capability for the deployment's namespace.`,
		Args: cobra.ExactArgs(1),
		RunE: f.onDeployment(func(cmd *cobra.Command, c *apiclient.Client, d *structs.Deployment) error {
			resp, err := c.Deployments().Unblock(cmd.Context(), d.ID)
			if err != nil {
				return verbError("unblocking deployment", err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Deployment %q unblocked\n", d.ID)
			if f.detach && resp.EvalID == "" {
				return nil
			}
			return f.verbResult(cmd.Context(), c, w, d.ID, resp)
		}),
	}
	f.addAddress(cmd)
	f.addVerbose(cmd)
	f.addDetach(cmd)
	return cmd
}

// regionsTable is the "Multiregion Deployment" table of deployment
// status, as Nomad's: each region of the job's multiregion block with its
// deployment of the same job version and that deployment's status, read
// through the agent with ?region=. A region that cannot be read shows as
// "<region> (error)". Empty for a single-region deployment.
func regionsTable(ctx context.Context, c *apiclient.Client, d *structs.Deployment, short func(string) string) string {
	if d == nil || !d.IsMultiregion {
		return ""
	}
	job, _, err := c.Jobs().Info(ctx, d.JobID, &apiclient.QueryOptions{Namespace: d.Namespace})
	if err != nil || !job.IsMultiregion() {
		return ""
	}
	type row struct{ region, id, status string }
	rows := make([]row, len(job.Multiregion.Regions))
	var wg sync.WaitGroup
	for i, r := range job.Multiregion.Regions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i] = row{region: r.Name}
			q := &apiclient.QueryOptions{Namespace: d.Namespace, Params: map[string]string{"region": r.Name}}
			deps, _, err := c.Jobs().Deployments(ctx, d.JobID, false, q)
			if err != nil {
				rows[i].region += " (error)"
				return
			}
			for _, rd := range deps {
				if rd.JobVersion == d.JobVersion {
					rows[i].id, rows[i].status = short(rd.ID), rd.Status
					return
				}
			}
			rows[i].region += " (error)"
		}()
	}
	wg.Wait()
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.region, b.region) })
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Region\tID\tStatus")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.region, r.id, r.status)
	}
	_ = tw.Flush()
	return b.String()
}
