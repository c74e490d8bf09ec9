package main

import (
	"encoding/json"

	"github.com/droverhq/drover/structs"
	"github.com/spf13/cobra"
)

func init() { registerJobCommand("inspect", newJobInspectCommand) }

func newJobInspectCommand() *cobra.Command {
	var files jobFileFlags
	cmd := &cobra.Command{
		Use:   "inspect [flags] FILE",
		Short: "Print a job file as the JSON drover would store",
		Long: `Parses the job file ("-" reads stdin) and prints {"Job": ...} in Nomad's API
JSON shape, with defaults and the update-block merge applied: each group's
Update shows the values that group will roll out with. Durations are integer
nanoseconds.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := files.loadJob(cmd, args[0])
			if err != nil {
				return err
			}
			return writeJSON(cmd, struct{ Job *structs.Job }{job})
		},
	}
	files.register(cmd)
	return cmd
}

// writeJSON prints v as indented JSON on stdout.
func writeJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "    ")
	return enc.Encode(v)
}
