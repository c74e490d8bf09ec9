package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() {
	registerCommand("eval", func() *cobra.Command {
		cmd := &cobra.Command{Use: "eval", Short: "Inspect evaluations"}
		cmd.AddCommand(newEvalStatusCommand())
		return cmd
	})
}

func newEvalStatusCommand() *cobra.Command {
	var address string
	var o outputFlags
	var monitor, verbose bool
	cmd := &cobra.Command{
		Use:   "status [flags] EVAL",
		Short: "Show an evaluation and why placements failed",
		Long: `Shows the evaluation with the given ID, or unique ID prefix: its status,
trigger, job and, when allocations could not be placed, the explanation
per task group (filtered constraints, exhausted dimensions). An ambiguous
prefix lists the matching evaluations and exits 1.

-monitor follows the evaluation to its end, as job run does, with job run's
exit codes; -verbose prints full IDs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			e, err := lookupEval(cmd.Context(), c, cmd.OutOrStdout(), args[0])
			if err != nil {
				return asExit(err)
			}
			if o.set() {
				return o.write(cmd, e)
			}
			if monitor {
				m := newMonitor(c, cmd.OutOrStdout(), true)
				m.verbose = verbose
				code, err := m.run(cmd.Context(), e.ID)
				return monitorExit("the evaluation", code, err)
			}
			printEvalStatus(cmd.OutOrStdout(), e, verbose)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	cmd.Flags().BoolVar(&monitor, "monitor", false, "follow the evaluation (and the deployment it starts) to its end")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full IDs")
	return cmd
}

func printEvalStatus(w io.Writer, e *structs.Evaluation, verbose bool) {
	idShort := idShort
	if verbose {
		idShort = func(s string) string { return s }
	}
	kv := [][2]string{
		{"ID", e.ID},
		{"Create Time", fmtUnixNano(e.CreateTime)},
		{"Modify Time", fmtUnixNano(e.ModifyTime)},
		{"Status", e.Status},
		{"Status Description", orNone(e.StatusDescription)},
		{"Type", e.Type},
		{"TriggeredBy", e.TriggeredBy},
		{"Job ID", e.JobID},
	}
	if e.NodeID != "" {
		kv = append(kv, [2]string{"Node ID", idShort(e.NodeID)})
	}
	if e.DeploymentID != "" {
		kv = append(kv, [2]string{"Deployment ID", idShort(e.DeploymentID)})
	}
	if e.NextEval != "" {
		kv = append(kv, [2]string{"Next Eval", idShort(e.NextEval)})
	}
	if e.BlockedEval != "" {
		kv = append(kv, [2]string{"Blocked Eval", idShort(e.BlockedEval)})
	}
	kv = append(kv,
		[2]string{"Priority", fmt.Sprint(e.Priority)},
		[2]string{"Placement Failures", fmt.Sprint(len(e.FailedTGAllocs) > 0)})
	printKV(w, kv)
	if len(e.FailedTGAllocs) == 0 {
		return
	}
	fmt.Fprintln(w, "\n==> Failed Placements")
	for _, g := range sortedKeys(e.FailedTGAllocs) {
		metric := e.FailedTGAllocs[g]
		n := e.QueuedAllocations[g]
		if n == 0 {
			n = metric.CoalescedFailures + 1
		}
		noun := "allocation"
		if n != 1 {
			noun += "s"
		}
		fmt.Fprintf(w, "Task Group %q (failed to place %d %s):\n", g, n, noun)
		for _, l := range allocMetricLines(metric) {
			fmt.Fprintf(w, "  * %s\n", l)
		}
	}
	if e.BlockedEval != "" {
		fmt.Fprintf(w, "\nEvaluation %q waiting for additional capacity to place remainder\n", idShort(e.BlockedEval))
	}
}
