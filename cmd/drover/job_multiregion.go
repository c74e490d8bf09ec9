package main

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// Multi-region jobs in the CLI (website/multiregion.md#multi-region-jobs):
// job plan plans each region's copy in its region, in the order the
// regions roll; job status lists each region's copy with its version and
// its latest deployment; job stop -global stops every region. job run
// does not monitor a multi-region job, as Nomad's.

// regionOrder words the order a multi-region job's regions roll in.
func regionOrder(m *structs.Multiregion) string {
	names := make([]string, len(m.Regions))
	for i, r := range m.Regions {
		names[i] = r.Name
	}
	at := "all at once"
	if s := m.Strategy; s != nil && s.MaxParallel > 0 && s.MaxParallel < len(m.Regions) {
		at = fmt.Sprintf("%d at a time", s.MaxParallel)
	}
	line := fmt.Sprintf("Regions, in the order they roll (%s): %s", at, strings.Join(names, ", "))
	if s := m.Strategy; s != nil && s.OnFailure != "" {
		line += fmt.Sprintf("; on failure: %s", s.OnFailure)
	}
	return line
}

// planMultiregion plans each region's copy of job in that region (Nomad's
// job plan of a multi-region job), printed in the order the regions roll,
// or, with -json-output or -t, as Nomad's map of region to plan.
func planMultiregion(cmd *cobra.Command, c *apiclient.Client, job *structs.Job, f *opFlags, diff, verbose bool, file string) error {
	plans := map[string]*apiclient.JobPlanResponse{}
	failed := false
	for _, r := range job.Multiregion.Regions {
		c.SetRegion(r.Name)
		resp, err := c.Jobs().Plan(cmd.Context(), job.ID, job, true)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "Error during plan for region %q: %v\n", r.Name, err)
			failed = true
			continue
		}
		if !diff {
			resp.Diff = nil
		}
		plans[r.Name] = resp
	}
	if failed {
		return exitCode(planError)
	}
	if f.json || f.tmpl != "" {
		o := outputFlags{json: f.json, tmpl: f.tmpl}
		if err := o.write(cmd, plans); err != nil {
			if ee, ok := err.(*exitError); ok {
				ee.code = planError
			}
			return err
		}
	} else {
		out := cmd.OutOrStdout()
		fmt.Fprintln(out, regionOrder(job.Multiregion))
		for _, r := range job.Multiregion.Regions {
			fmt.Fprintf(out, "\nRegion: %q\n", r.Name)
			printPlan(out, cmd.ErrOrStderr(), job.ForRegion(r.Name), plans[r.Name], file, verbose)
		}
	}
	for _, resp := range plans {
		if planChangesAllocs(resp) {
			return exitCode(planChanges)
		}
	}
	return nil
}

// printMultiregionStatus prints, for a multi-region job, each region's
// copy: its version and its latest deployment (the section Nomad's job
// status names Multiregion Deployment). A region that cannot be read says
// so in its row.
func printMultiregionStatus(cmd *cobra.Command, c *apiclient.Client, out io.Writer, job *structs.Job, v jobStatusView) {
	fmt.Fprintln(out, "\nMultiregion Deployment")
	fmt.Fprintln(out, regionOrder(job.Multiregion))
	tw := newTabs(out)
	fmt.Fprintln(tw, "Region\tVersion\tID\tStatus")
	for _, r := range job.Multiregion.Regions {
		q := &apiclient.QueryOptions{Namespace: job.Namespace, Params: map[string]string{"region": r.Name}}
		var copy *structs.Job
		if _, err := c.Get(cmd.Context(), "/v1/job/"+url.PathEscape(job.ID), q, &copy); err != nil || copy == nil {
			what := "no copy of the job"
			if err != nil && !apiclient.IsNotFound(err) {
				what = "error: " + oneLine(err.Error())
			}
			fmt.Fprintf(tw, "%s\t-\t-\t%s\n", r.Name, what)
			continue
		}
		id, status := "-", "no deployment"
		var dep *structs.Deployment
		if _, err := c.Get(cmd.Context(), "/v1/job/"+url.PathEscape(job.ID)+"/deployment", q, &dep); err != nil {
			status = "error: " + oneLine(err.Error())
		} else if dep != nil && dep.ID != "" {
			id, status = v.id(dep.ID), dep.Status
			if dep.JobVersion != copy.Version {
				status += fmt.Sprintf(" (version %d)", dep.JobVersion)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", r.Name, copy.Version, id, status)
	}
	tw.Flush()
}

// oneLine keeps the first line of an error's text.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// deregisterJob stops (or purges) a job; global stops a multi-region job
// in every region it names (Nomad's job stop -global).
func deregisterJob(cmd *cobra.Command, c *apiclient.Client, id string, purge, global bool) (*apiclient.JobDeregisterResponse, error) {
	q := &apiclient.QueryOptions{Params: map[string]string{}}
	if purge {
		q.Params["purge"] = "true"
	}
	if global {
		q.Params["global"] = "true"
	}
	var out apiclient.JobDeregisterResponse
	if _, err := c.Delete(cmd.Context(), "/v1/job/"+url.PathEscape(id), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
