package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

func init() { registerJobCommand("revert", newJobRevertCommand) }

func newJobRevertCommand() *cobra.Command {
	var f opFlags
	cmd := &cobra.Command{
		Use:   "revert [flags] JOB VERSION",
		Short: "Register an earlier version of a job again, as a new version",
		Long: `Registers the given version's specification again; the job gets a new
version number and rolls out like any other change. Without -detach the
rollout is followed live, as job run does (exit 0 when it succeeds, 1 when
it fails); with it, only the evaluation ID is printed.`,
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
			// Follow the new version's rollout, as job run does.
			m := newMonitor(c, w, true)
			code, err := m.run(cmd.Context(), resp.EvalID)
			return monitorExit("the job", code, err)
		},
	}
	f.addAddress(cmd)
	f.addVerbose(cmd)
	f.addDetach(cmd)
	return cmd
}
