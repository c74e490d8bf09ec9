package main

import (
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() { registerJobCommand("run", newJobRunCommand) }

func newJobRunCommand() *cobra.Command {
	var (
		files      jobFileFlags
		address    string
		detach     bool
		checkIndex uint64
		output     bool
		verbose    bool
		preserve   bool
	)
	cmd := &cobra.Command{
		Use:   "run [flags] FILE",
		Short: "Submit a job and watch it roll out",
		Long: `Parses the job file ("-" reads stdin), submits it and, unless -detach is
given, monitors the evaluation and then the deployment it started: the
deployment table is redrawn in place on a terminal, appended otherwise.

With -check-index N the job is registered only if its stored job modify
index is N (0: the job must not exist yet), as "drover job plan" prints it.

Exit codes: 0 when everything was placed and the deployment (if any)
succeeded; 1 on errors and when the deployment failed (after following an
automatic rollback to its end); 2 when allocations could not be placed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := files.loadJob(cmd, args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if output {
				// Nomad's -output: the registration's body, not sent.
				return writeJSON(cmd, map[string]any{"Job": job})
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			c.SetNamespace(job.Namespace)
			useJobRegion(c, job)
			if preserve {
				if err := preserveCounts(cmd, c, job); err != nil {
					return err
				}
			}
			var resp registered
			if cmd.Flags().Changed("check-index") {
				r, err := registerSubmitted(ctx, c, job, files.sub, true, checkIndex)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error submitting job: %v", err)}
				}
				resp = registered{r.EvalID, r.Warnings}
			} else {
				r, err := registerSubmitted(ctx, c, job, files.sub, false, 0)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error submitting job: %v", err)}
				}
				resp = registered{r.EvalID, r.Warnings}
			}
			if w := resp.warns; w != "" {
				fmt.Fprintf(out, "Job Warnings:\n%s\n\n", w)
			}
			if err := uiAfter(cmd, c, "/ui/jobs/"+url.PathEscape(job.ID)); err != nil {
				return err
			}
			if job.IsParameterized() {
				// Nor does a parameterized job: job dispatch runs its
				// children.
				fmt.Fprintln(out, "Job registration successful")
				return nil
			}
			if job.IsPeriodic() {
				// A periodic job runs nothing itself: there is no
				// evaluation to follow, as Nomad's job run says.
				fmt.Fprintln(out, "Job registration successful")
				if next := job.Periodic.Next(statusClock()); !next.IsZero() && job.Periodic.Enabled {
					now := statusClock()
					fmt.Fprintf(out, "Approximate next launch time: %s (%s from now)\n",
						fmtTime(next), next.Sub(now).Round(time.Second))
				}
				return nil
			}
			if detach || job.IsMultiregion() {
				// A multi-region job is not monitored, as Nomad's: its
				// regions roll in turn (job status shows them).
				fmt.Fprintln(out, "Job registration successful")
				fmt.Fprintf(out, "Evaluation ID: %s\n", resp.id)
				return nil
			}
			m := newMonitor(c, out, true)
			m.verbose = verbose
			code, err := m.run(ctx, resp.id)
			return monitorExit("the job", code, err)
		},
	}
	files.register(cmd)
	files.registerInput(cmd)
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&output, "output", false, `print the registration's JSON ({"Job": …}) instead of submitting the job`)
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full IDs")
	cmd.Flags().BoolVar(&preserve, "preserve-counts", false, "keep the running job's group counts instead of the file's")
	addUIFlag(cmd, "job")
	cmd.Flags().BoolVar(&detach, "detach", false, "return once the job is submitted, printing the evaluation ID")
	cmd.Flags().Uint64Var(&checkIndex, "check-index", 0, "register only if the job's modify index is this (0: the job must not exist)")
	return cmd
}

// preserveCounts sets the count of each of job's groups that the
// registered job has to the registered count, as Nomad's
// -preserve-counts; a job not registered yet keeps the file's counts.
func preserveCounts(cmd *cobra.Command, c *apiclient.Client, job *structs.Job) error {
	cur, _, err := c.Jobs().Info(cmd.Context(), job.ID, &apiclient.QueryOptions{Namespace: job.Namespace})
	if apiclient.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error reading the registered job for -preserve-counts: %v", err)}
	}
	counts := map[string]int{}
	for _, tg := range cur.TaskGroups {
		counts[tg.Name] = tg.Count
	}
	for _, tg := range job.TaskGroups {
		if n, ok := counts[tg.Name]; ok {
			tg.Count = n
		}
	}
	return nil
}

// registered is what job run keeps of a registration's answer: the
// evaluation's ID and the server's warnings.
type registered struct{ id, warns string }
