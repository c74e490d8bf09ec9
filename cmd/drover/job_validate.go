package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { registerJobCommand("validate", newJobValidateCommand) }

func newJobValidateCommand() *cobra.Command {
	var files jobFileFlags
	cmd := &cobra.Command{
		Use:   "validate [flags] FILE",
		Short: "Check a job file for errors without submitting it",
		Long: `Parses the job file (HCL or Nomad JSON; "-" reads stdin), applies defaults and
the update-block merge, and reports every problem at once as FILE:LINE:COL:
message. Exits 0 when the job is valid, 1 otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := files.loadJob(cmd, args[0]); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Job validation successful")
			return nil
		},
	}
	files.register(cmd)
	files.registerInput(cmd)
	return cmd
}
