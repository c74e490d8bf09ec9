package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/jobdiff"
	"github.com/droverhq/drover/structs"
)

func init() { registerJobCommand("plan", newJobPlanCommand) }

// Exit codes of job plan, as Nomad's.
const (
	planNoChanges = 0
	planChanges   = 1
	planError     = 255
)

func newJobPlanCommand() *cobra.Command {
	var files jobFileFlags
	var f opFlags
	var verbose, diff bool
	cmd := &cobra.Command{
		Use:   "plan [flags] FILE",
		Short: "Show what submitting a job file would change, without changing anything",
		Long: `Asks the servers to schedule the job file against the current state without
committing anything, and shows every field that would change (with what the
change forces: "forces create/destroy update", "forces in-place update", …)
and per task group what would happen: allocations
created, destroyed, replaced (create/destroy update), updated in place,
placed as canaries or left alone; and placements that would find no node.

Exit code 0: no allocation would change; 1: allocations would be created,
replaced or stopped; 255: an error. The Job Modify Index printed at the end
makes "drover job run -check-index N" refuse to run if the job changed in
the meantime.

-json-output prints the plan's answer as JSON and -t formats it with a Go
template; -json says the file is JSON, as Nomad's. -diff=false leaves the
field diff out.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := files.loadJob(cmd, args[0])
			if err != nil {
				if ee, ok := err.(*exitError); ok {
					ee.code = planError
				}
				return err
			}
			if f.json && f.tmpl != "" {
				return &exitError{code: planError, msg: "Both -json-output and -t formatting are not allowed"}
			}
			c, err := f.client()
			if err != nil {
				return &exitError{code: planError, msg: err.Error()}
			}
			c.SetNamespace(job.Namespace)
			if job.IsMultiregion() {
				// Each region's copy, planned in its region
				// (job_multiregion.go).
				return planMultiregion(cmd, c, job, &f, diff, verbose, args[0])
			}
			useJobRegion(c, job)
			resp, err := c.Jobs().Plan(cmd.Context(), job.ID, job, true)
			if err != nil {
				return &exitError{code: planError, msg: fmt.Sprintf("Error during plan: %v", err)}
			}
			if !diff {
				resp.Diff = nil
			}
			if f.json || f.tmpl != "" {
				o := outputFlags{json: f.json, tmpl: f.tmpl}
				if err := o.write(cmd, resp); err != nil {
					if ee, ok := err.(*exitError); ok {
						ee.code = planError
					}
					return err
				}
			} else {
				printPlan(cmd.OutOrStdout(), cmd.ErrOrStderr(), job, resp, args[0], verbose)
			}
			if planChangesAllocs(resp) {
				return exitCode(planChanges)
			}
			return nil
		},
	}
	files.register(cmd)
	files.registerInput(cmd)
	f.addAddress(cmd)
	cmd.Flags().BoolVar(&f.json, "json-output", false, "print the API's plan answer as JSON")
	cmd.Flags().StringVarP(&f.tmpl, "t", "t", "", "format the API's plan answer with a Go template")
	cmd.Flags().BoolVar(&diff, "diff", true, "print the field diff (-diff=false leaves it out)")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "show unchanged fields, blocks and tasks beside the changes")
	return cmd
}

// planChangesAllocs reports whether any group would create, stop or
// replace allocations.
func planChangesAllocs(resp *apiclient.JobPlanResponse) bool {
	if resp.Annotations == nil {
		return false
	}
	for _, u := range resp.Annotations.DesiredTGUpdates {
		if u.Changes() {
			return true
		}
	}
	return false
}

func printPlan(w, errw io.Writer, job *structs.Job, resp *apiclient.JobPlanResponse, file string, verbose bool) {
	if resp.Diff != nil {
		fmt.Fprint(w, jobdiff.Format(resp.Diff, verbose))
	} else {
		fmt.Fprintf(w, "  Job: %q\n", job.ID)
	}
	var widths []string
	for _, tg := range job.TaskGroups {
		if l := rolloutWidths(tg, job.Type); l != "" {
			widths = append(widths, l)
		}
	}
	if len(widths) > 0 {
		fmt.Fprintln(w)
		for _, l := range widths {
			fmt.Fprintln(w, l)
		}
	}
	printRolloutPlan(w, job.ID, resp.RolloutPlan)

	fmt.Fprintf(w, "\nScheduler dry-run:\n")
	if len(resp.FailedTGAllocs) == 0 {
		fmt.Fprintln(w, "- All tasks successfully allocated.")
	} else {
		fmt.Fprintln(w, "- WARNING: Failed to place all allocations.")
		groups := make([]string, 0, len(resp.FailedTGAllocs))
		for g := range resp.FailedTGAllocs {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			m := resp.FailedTGAllocs[g]
			fmt.Fprintf(w, "  Task Group %q (failed to place %d allocation%s):\n", g, m.CoalescedFailures+1, plural(m.CoalescedFailures+1))
			for _, l := range planMetricLines(m) {
				fmt.Fprintf(w, "    * %s\n", l)
			}
		}
	}
	if resp.Warnings != "" {
		fmt.Fprintf(errw, "\nJob Warnings:\n%s\n", resp.Warnings)
	}
	fmt.Fprintf(w, "\nJob Modify Index: %d\n", resp.JobModifyIndex)
	fmt.Fprintf(w, "To submit the job with version verification run:\n\n")
	fmt.Fprintf(w, "drover job run -check-index %d %s\n\n", resp.JobModifyIndex, file)
	fmt.Fprintln(w, `When running the job with the check-index flag, the job will only be run if the
job modify index given matches the server-side version. If the index has
changed, another user has modified the job and the plan's results are
potentially invalid.`)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// planMetricLines explains a group's placement failures.
func planMetricLines(m *structs.AllocationMetric) []string {
	var out []string
	if m.NodesEvaluated == 0 {
		out = append(out, "No nodes were eligible for evaluation")
	}
	for _, k := range sortedMapKeys(m.NodesAvailable) {
		if m.NodesAvailable[k] == 0 {
			out = append(out, fmt.Sprintf("No nodes are available in datacenter %q", k))
		}
	}
	for _, k := range sortedMapKeys(m.ClassFiltered) {
		out = append(out, fmt.Sprintf("Class %q: %d nodes excluded by filter", k, m.ClassFiltered[k]))
	}
	for _, k := range sortedMapKeys(m.ConstraintFiltered) {
		out = append(out, fmt.Sprintf("Constraint %q: %d nodes excluded by filter", k, m.ConstraintFiltered[k]))
	}
	for _, k := range sortedMapKeys(m.DimensionExhausted) {
		out = append(out, fmt.Sprintf("Dimension %q exhausted on %d nodes", k, m.DimensionExhausted[k]))
	}
	return out
}

func sortedMapKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
