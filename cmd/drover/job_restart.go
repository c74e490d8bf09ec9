package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() { registerJobCommand("restart", newJobRestartCommand) }

// restartFlags are job restart's flags, Nomad's names and meanings.
type restartFlags struct {
	address    string
	groups     []string
	tasks      []string
	allTasks   bool
	reschedule bool
	batchSize  string
	batchWait  string
	onError    string
	yes        bool
	verbose    bool
	plan       bool
	detach     bool
}

func newJobRestartCommand() *cobra.Command {
	var f restartFlags
	cmd := &cobra.Command{
		Use:   "restart [flags] JOB",
		Short: "Restart or replace every allocation of a job, as a rollout",
		Long: `Restarts the tasks of every running allocation of JOB in place, or with
-reschedule replaces every allocation by a new placement. The restart runs
on the servers as a deployment of the job's current version: it follows
the job's update block (max_parallel, max_surge with -reschedule, zones
with their disruption budgets, checkpoints, max_failed and on_failure,
group_order), is shown by deployment status and list, can be paused,
resumed and failed with the deployment commands, and survives a change of
leader. -batch-size and -batch-wait override the width of a batch and the
wait between batches. Each allocation is restarted once; one is done when
it is healthy again. A new version of the job cancels the restart.

With -plan the batches are printed and nothing is restarted. Otherwise the
restart is monitored until it ends: exit 0 when successful, 1 otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, args[0])
		},
	}
	fl := cmd.Flags()
	addAddressFlag(cmd, &f.address)
	fl.StringArrayVar(&f.groups, "group", nil, "restart only the allocations of this group (repeatable)")
	fl.StringArrayVar(&f.tasks, "task", nil, "restart only this task (repeatable); groups without it are left alone")
	fl.BoolVar(&f.allTasks, "all-tasks", false, "restart every task, as alloc restart -all-tasks does")
	fl.BoolVar(&f.reschedule, "reschedule", false, "replace the allocations by new placements instead of restarting them in place")
	fl.StringVar(&f.batchSize, "batch-size", "", "allocations restarted at once, N or N% (default: the group's max_parallel)")
	fl.StringVar(&f.batchWait, "batch-wait", "", `wait between batches, a duration, or "ask" to be asked (default: the group's stagger)`)
	fl.StringVar(&f.onError, "on-error", "", `on a failed restart: "ask" to be asked whether to go on, "fail" to stop (default: the group's on_failure)`)
	fl.BoolVarP(&f.yes, "yes", "y", false, "answer yes to every question: go on after each batch and after errors")
	fl.BoolVar(&f.verbose, "verbose", false, "print full identifiers")
	fl.BoolVar(&f.plan, "plan", false, "print the batches the restart would run, and restart nothing")
	fl.BoolVar(&f.detach, "detach", false, "return once the restart has started, printing its deployment ID")
	return cmd
}

func (f *restartFlags) run(cmd *cobra.Command, arg string) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	switch f.onError {
	case "", structs.RestartOnErrorAsk, structs.RestartOnErrorFail:
	default:
		return &exitError{code: 1, msg: fmt.Sprintf(`Invalid -on-error %q: want "ask" or "fail"`, f.onError)}
	}
	c, err := apiClientFor(cmd, f.address)
	if err != nil {
		return err
	}
	jobID, err := resolveJobID(ctx, c, out, arg)
	if err != nil {
		return err
	}
	req := &apiclient.RestartRequest{
		Groups: f.groups, Tasks: f.tasks, AllTasks: f.allTasks, Reschedule: f.reschedule,
		BatchSize: f.batchSize, BatchWait: f.batchWait, OnError: f.onError, Plan: f.plan,
	}
	if f.yes && req.BatchWait == "ask" {
		// Nomad's -yes goes on after each batch without asking.
		req.BatchWait = ""
	}
	resp, err := c.Jobs().Restart(ctx, jobID, req)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error restarting job %q: %v", jobID, err)}
	}
	if f.plan {
		printRestartPlan(out, jobID, resp.RestartPlan)
		return nil
	}
	m := newMonitor(c, out, true)
	m.headf("Restarting job %q: deployment %q, evaluation %q", jobID, f.id(resp.DeploymentID), f.id(resp.EvalID))
	if f.detach {
		fmt.Fprintln(out, resp.DeploymentID)
		return nil
	}
	code, err := f.follow(ctx, m, c, cmd.InOrStdin(), resp.DeploymentID)
	return monitorExit("the restart", code, err)
}

func (f *restartFlags) id(id string) string {
	if f.verbose {
		return id
	}
	return idShort(id)
}

// follow redraws the restart's deployment until it ends. A pause after a
// batch (-batch-wait ask) or on an error (-on-error ask) asks whether to
// go on: yes resumes it; no leaves a batch pause as it is and fails an
// error pause. Other pauses (an operator's, the job's checkpoints) are
// waited out.
func (f *restartFlags) follow(ctx context.Context, m *evalMonitor, c *apiclient.Client, in io.Reader, id string) (int, error) {
	table := &deploymentTable{out: m.out, tty: m.tty}
	answers := bufio.NewReader(in)
	var index, asked uint64
	for {
		d, idx, err := m.deployment(ctx, id, index)
		if err != nil {
			return 1, err
		}
		index = idx
		table.draw(m.stamp(), d)
		if !d.Active() {
			fmt.Fprintln(m.out)
			if d.Status == structs.DeploymentStatusSuccessful {
				fmt.Fprintf(m.out, "  ✓ Restart %q successful\n", f.id(d.ID))
				return exitOK, nil
			}
			fmt.Fprintf(m.out, "  ! Restart %q %s: %s\n", f.id(d.ID), d.Status, d.StatusDescription)
			return exitDeploymentFailed, nil
		}
		// Only the pauses the flags asked for are questions; others (the
		// job's own checkpoints, on_failure = "pause", an operator's)
		// wait for `deployment resume`.
		batchPause, errorPause := restartPause(d)
		batchPause = batchPause && f.batchWait == "ask"
		errorPause = errorPause && f.onError == structs.RestartOnErrorAsk
		if !batchPause && !errorPause || d.ModifyIndex == asked {
			continue
		}
		asked = d.ModifyIndex
		question := "Restart the next batch?"
		if errorPause {
			question = "An allocation failed to restart. Go on restarting?"
		}
		yes := f.yes
		if !yes {
			fmt.Fprintf(m.out, "\n  ? %s [y/N]: ", question)
			line, err := answers.ReadString('\n')
			if err != nil && line == "" {
				return 1, fmt.Errorf("reading the answer: %w", err)
			}
			a := strings.ToLower(strings.TrimSpace(line))
			yes = a == "y" || a == "yes"
		}
		switch {
		case yes:
			if _, err := c.Deployments().Pause(ctx, d.ID, false); err != nil {
				return 1, fmt.Errorf("resuming the restart: %w", err)
			}
		case errorPause:
			if _, err := c.Deployments().Fail(ctx, d.ID); err != nil {
				return 1, fmt.Errorf("failing the restart: %w", err)
			}
		default:
			fmt.Fprintf(m.out, "\n  ! Restart %q left paused: drover deployment resume %s (or fail)\n", f.id(d.ID), f.id(d.ID))
			return exitDeploymentFailed, nil
		}
	}
}

// restartPause tells a restart's pause after a batch (a checkpoint, which
// -batch-wait ask sets after each batch) from one on a failure; an
// operator's pause is neither.
func restartPause(d *structs.Deployment) (batch, failure bool) {
	if d.Status != structs.DeploymentStatusPaused || !d.ResumeAt.IsZero() {
		return false, false
	}
	switch desc := d.StatusDescription; {
	case desc == structs.DeploymentStatusDescriptionPaused:
		return false, false
	case strings.HasPrefix(desc, "Deployment paused at checkpoint"):
		return true, false
	}
	return false, true
}

// printRestartPlan prints the batches a restart would run.
func printRestartPlan(w io.Writer, jobID string, plan []structs.RolloutBatch) {
	if len(plan) == 0 {
		fmt.Fprintln(w, "Nothing to restart")
		return
	}
	fmt.Fprintln(w, "Restart plan, if nothing fails:")
	tw := newTabs(w)
	fmt.Fprintln(tw, "Group\tBatch\tZone\tAllocs\tSurge\tPause After")
	for _, b := range plan {
		zone, pause := b.Zone, b.PauseAfter
		if zone == "" {
			zone = "-"
		}
		if pause == "" {
			pause = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%t\t%s\n", b.Group, b.Batch, zone, allocList(jobID, b.Allocs), b.Surge, pause)
	}
	tw.Flush()
}

// restartKind says what a restart's deployment does, for its status:
// "in place, groups web, api" or "replaced (-reschedule), groups web".
func restartKind(r *structs.RestartSpec) string {
	kind := "in place"
	if r.Reschedule {
		kind = "replaced (-reschedule)"
	}
	out := kind + ", groups " + strings.Join(r.Groups, ", ")
	if len(r.Tasks) > 0 {
		out += ", tasks " + strings.Join(r.Tasks, ", ")
	}
	if r.BatchSize != nil {
		out += ", batch size " + r.BatchSize.String()
	}
	return out
}
