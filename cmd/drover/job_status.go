package main

import (
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() { registerJobCommand("status", newJobStatusCommand) }

func newJobStatusCommand() *cobra.Command {
	var address string
	var o outputFlags
	var v jobStatusView
	cmd := &cobra.Command{
		Use:   "status [flags] [JOB]",
		Short: "List jobs, or show one job's summary, deployment and allocations",
		Long: `Without an argument, lists the jobs: ID, Type, Priority, Status and Submit
Date. With a job ID (or a unique prefix of one), shows the job, the
summary of its allocations per task group, its latest deployment and its
allocations, as Nomad does.

-short shows the job's lines only; -evals adds its evaluations; -verbose
prints full IDs; -all-allocs also lists the allocations of an earlier job
registered under the same ID (purged, then registered again).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			if len(args) == 0 {
				jobs, _, err := c.Jobs().List(ctx, nil)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error querying jobs: %v", err)}
				}
				if o.set() {
					return o.write(cmd, jobs)
				}
				if len(jobs) == 0 {
					fmt.Fprintln(out, "No running jobs")
					return nil
				}
				printJobStubs(out, jobs)
				return uiAfter(cmd, c, "/ui/jobs")
			}
			job, err := lookupJob(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			if o.set() {
				status, err := jobStatusOf(cmd, c, job)
				if err != nil {
					return err
				}
				if err := o.write(cmd, status); err != nil {
					return err
				}
				return uiAfter(cmd, c, "/ui/jobs/"+url.PathEscape(job.ID))
			}
			if err := printJobStatus(cmd, c, job, v); err != nil {
				return err
			}
			return uiAfter(cmd, c, "/ui/jobs/"+url.PathEscape(job.ID))
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	cmd.Flags().BoolVar(&v.short, "short", false, "show the job's lines only, no summary, deployment or allocations")
	cmd.Flags().BoolVar(&v.evals, "evals", false, "show the job's evaluations")
	cmd.Flags().BoolVar(&v.allAllocs, "all-allocs", false, "also list the allocations of an earlier job of the same ID")
	cmd.Flags().BoolVar(&v.verbose, "verbose", false, "full IDs")
	addUIFlag(cmd, "job")
	return cmd
}

// jobStatusView are job status's display flags.
type jobStatusView struct {
	short, evals, allAllocs, verbose bool
}

// id is an ID as job status prints it.
func (v jobStatusView) id(s string) string {
	if v.verbose {
		return s
	}
	return idShort(s)
}

// asExit turns an error into an exitError with code 1, keeping exit
// errors as they are.
func asExit(err error) error {
	if _, ok := err.(*exitError); ok {
		return err
	}
	return &exitError{code: 1, msg: "Error: " + err.Error()}
}

// jobStatus is what `job status -json JOB` prints, as Nomad's: the job
// with its summary, allocations, evaluations and latest deployment.
type jobStatus struct {
	Summary          *structs.JobSummary
	Allocations      []*structs.AllocationListStub
	Evaluations      []*structs.Evaluation
	LatestDeployment *structs.Deployment
	Job              *structs.Job
}

func jobStatusOf(cmd *cobra.Command, c *apiclient.Client, job *structs.Job) (*jobStatus, error) {
	ctx := cmd.Context()
	out := &jobStatus{Job: job}
	var err error
	if out.Summary, _, err = c.Jobs().Summary(ctx, job.ID, nil); err != nil {
		return nil, asExit(fmt.Errorf("querying the job summary: %w", err))
	}
	if out.Allocations, _, err = c.Jobs().Allocations(ctx, job.ID, nil); err != nil {
		return nil, asExit(fmt.Errorf("querying the job's allocations: %w", err))
	}
	if _, err = c.Get(ctx, "/v1/job/"+url.PathEscape(job.ID)+"/evaluations", nil, &out.Evaluations); err != nil {
		return nil, asExit(fmt.Errorf("querying the job's evaluations: %w", err))
	}
	if _, err = c.Get(ctx, "/v1/job/"+url.PathEscape(job.ID)+"/deployment", nil, &out.LatestDeployment); err != nil {
		return nil, asExit(fmt.Errorf("querying the job's latest deployment: %w", err))
	}
	return out, nil
}

func printJobStatus(cmd *cobra.Command, c *apiclient.Client, job *structs.Job, v jobStatusView) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	summary, _, err := c.Jobs().Summary(ctx, job.ID, nil)
	if err != nil {
		return asExit(fmt.Errorf("querying the job summary: %w", err))
	}
	allocs, _, err := c.Jobs().Allocations(ctx, job.ID, nil)
	if err != nil {
		return asExit(fmt.Errorf("querying the job's allocations: %w", err))
	}
	kv := [][2]string{
		{"ID", job.ID},
		{"Name", job.Name},
		{"Submit Date", fmtUnixNano(job.SubmitTime)},
		{"Type", job.Type},
		{"Priority", fmt.Sprint(job.Priority)},
		{"Datacenters", strings.Join(job.Datacenters, ",")},
		{"Namespace", job.Namespace},
		{"Node Pool", job.NodePool},
		{"Status", jobStatusWord(job)},
		{"Periodic", fmt.Sprint(job.IsPeriodic())},
		{"Parameterized", fmt.Sprint(job.IsParameterized())},
	}
	if job.IsPeriodic() && !job.IsParameterized() {
		next := "none (job stopped)"
		switch {
		case !job.Stop && !job.Periodic.Enabled:
			next = "none (periodic launches disabled)"
		case !job.Stop:
			now := statusClock()
			if t := job.Periodic.Next(now); !t.IsZero() {
				next = fmt.Sprintf("%s (%s from now)", fmtTime(t), t.Sub(now).Round(time.Second))
			}
		}
		kv = append(kv, [2]string{"Next Periodic Launch", next})
	}
	printKV(out, kv)
	if v.short {
		return nil
	}
	if job.IsParent() {
		return printPeriodicChildren(cmd, c, job, summary)
	}
	fmt.Fprintln(out, "\nSummary")
	printJobSummary(out, job, summary)

	var dep *structs.Deployment
	if _, err := c.Get(ctx, "/v1/job/"+url.PathEscape(job.ID)+"/deployment", nil, &dep); err == nil && dep != nil && dep.ID != "" {
		fmt.Fprintln(out, "\nLatest Deployment")
		printKV(out, [][2]string{
			{"ID", v.id(dep.ID)},
			{"Status", dep.Status},
			{"Description", dep.StatusDescription},
		})
		if job.IsMultiregion() {
			printMultiregionStatus(cmd, c, out, job, v) // job_multiregion.go
		}
		fmt.Fprintln(out, "\nDeployed")
		printDeploymentGroups(out, dep)
	} else if job.IsMultiregion() {
		printMultiregionStatus(cmd, c, out, job, v)
	}
	if v.evals {
		var evals []*structs.Evaluation
		if _, err := c.Get(ctx, "/v1/job/"+url.PathEscape(job.ID)+"/evaluations", nil, &evals); err != nil {
			return asExit(fmt.Errorf("querying the job's evaluations: %w", err))
		}
		fmt.Fprintln(out, "\nEvaluations")
		tw := newTabs(out)
		fmt.Fprintln(tw, "ID\tPriority\tTriggered By\tStatus\tPlacement Failures")
		for _, e := range evals {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%t\n", v.id(e.ID), e.Priority, e.TriggeredBy, e.Status, len(e.FailedTGAllocs) > 0)
		}
		tw.Flush()
	}
	if !v.allAllocs {
		// An allocation of an earlier job of the same ID (purged and
		// registered again) predates this job's creation.
		kept := allocs[:0:0]
		for _, a := range allocs {
			if a.CreateIndex >= job.CreateIndex {
				kept = append(kept, a)
			}
		}
		allocs = kept
	}
	fmt.Fprintln(out, "\nAllocations")
	if len(allocs) == 0 {
		fmt.Fprintln(out, "No allocations placed")
		return nil
	}
	if v.verbose {
		printAllocStubsFull(out, allocs)
		return nil
	}
	printAllocStubs(out, allocs)
	return nil
}

// printAllocStubsFull is printAllocStubs with full IDs (-verbose).
func printAllocStubsFull(w io.Writer, stubs []*structs.AllocationListStub) {
	sorted := append([]*structs.AllocationListStub(nil), stubs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].CreateIndex > sorted[j].CreateIndex })
	tw := newTabs(w)
	fmt.Fprintln(tw, "ID\tEval ID\tNode ID\tTask Group\tVersion\tDesired\tStatus\tCreated\tModified")
	for _, a := range sorted {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", a.ID, a.EvalID, a.NodeID, a.TaskGroup,
			a.JobVersion, a.DesiredStatus, a.ClientStatus, fmtAgo(a.CreateTime), fmtAgo(a.ModifyTime))
	}
	tw.Flush()
}

// jobStatusWord is the job's status, with "(stopped)" when it is.
func jobStatusWord(j *structs.Job) string {
	s := j.Status
	if s == "" {
		s = structs.JobStatusPending
	}
	if j.Stop {
		s += " (stopped)"
	}
	return s
}

// printJobSummary prints the per-group counts in the job's group order,
// then any other group the summary has.
func printJobSummary(w io.Writer, job *structs.Job, sum *structs.JobSummary) {
	var names []string
	seen := map[string]bool{}
	for _, tg := range job.TaskGroups {
		names = append(names, tg.Name)
		seen[tg.Name] = true
	}
	var extra []string
	for g := range sum.Summary {
		if !seen[g] {
			extra = append(extra, g)
		}
	}
	sort.Strings(extra)
	names = append(names, extra...)
	tw := newTabs(w)
	fmt.Fprintln(tw, "Task Group\tQueued\tStarting\tRunning\tFailed\tComplete\tLost\tUnknown")
	for _, g := range names {
		s := sum.Summary[g]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", g, s.Queued, s.Starting, s.Running, s.Failed, s.Complete, s.Lost, s.Unknown)
	}
	tw.Flush()
}

// printPeriodicChildren prints a periodic or parameterized job's children
// summary and the jobs it launched or dispatched, as Nomad's job status
// does.
func printPeriodicChildren(cmd *cobra.Command, c *apiclient.Client, job *structs.Job, summary *structs.JobSummary) error {
	out := cmd.OutOrStdout()
	if summary != nil && summary.Children != nil {
		fmt.Fprintln(out, "\nChildren Job Summary")
		tw := newTabs(out)
		fmt.Fprintln(tw, "Pending\tRunning\tDead")
		fmt.Fprintf(tw, "%d\t%d\t%d\n", summary.Children.Pending, summary.Children.Running, summary.Children.Dead)
		_ = tw.Flush()
	}
	suffix, none, title := structs.PeriodicLaunchSuffix, "No instances of periodic job found", "Previously Launched Jobs"
	if job.IsParameterized() {
		suffix, none, title = structs.DispatchLaunchSuffix, "No dispatched instances of parameterized job found", "Dispatched Jobs"
	}
	jobs, _, err := c.Jobs().List(cmd.Context(), &apiclient.QueryOptions{Params: map[string]string{"prefix": job.ID + suffix}})
	if err != nil {
		return asExit(fmt.Errorf("querying the launched jobs: %w", err))
	}
	var launched []*structs.JobListStub
	for _, j := range jobs {
		if j.ParentID == job.ID {
			launched = append(launched, j)
		}
	}
	if len(launched) == 0 {
		fmt.Fprintln(out, "\n"+none)
		return nil
	}
	fmt.Fprintln(out, "\n"+title)
	tw := newTabs(out)
	fmt.Fprintln(tw, "ID\tStatus")
	for _, j := range launched {
		fmt.Fprintf(tw, "%s\t%s\n", j.ID, j.Status)
	}
	return tw.Flush()
}
