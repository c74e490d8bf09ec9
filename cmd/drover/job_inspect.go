package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() { registerJobCommand("inspect", newJobInspectCommand) }

func newJobInspectCommand() *cobra.Command {
	var files jobFileFlags
	var f opFlags
	var version int64
	var hcl, withVars bool
	cmd := &cobra.Command{
		Use:   "inspect [flags] JOB|FILE",
		Short: "Print a registered job, or a job file, as the JSON drover stores",
		Long: `With a job's name (or a unique prefix), prints the job as the servers store it,
{"Job": ...} in Nomad's API JSON, as Nomad's job inspect; -version N prints
that stored version instead of the current one.

With a job file (a path that exists, or "-" for stdin), parses it and prints
{"Job": ...} with defaults and the update-block merge applied: each group's
Update shows the values that group will roll out with. Durations are integer
nanoseconds. -t formats the answer with a Go template instead.

With -hcl, prints the source the job's version was submitted from (job run
sends it), as Nomad's; -with-vars also prints, on stderr, the job run
command that submits it again with its variables.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if hcl || withVars {
				return inspectSubmission(cmd, &f, args[0], version, hcl, withVars)
			}
			var job *structs.Job
			if isJobFile(args[0]) {
				if version >= 0 {
					return &exitError{code: 1, msg: "-version reads a registered job: give the job's name, not a file"}
				}
				j, err := files.loadJob(cmd, args[0])
				if err != nil {
					return err
				}
				job = j
			} else {
				j, err := f.registeredJob(cmd, args[0], version)
				if err != nil {
					return err
				}
				job = j
			}
			out := struct{ Job *structs.Job }{job}
			if f.json && f.tmpl != "" {
				return &exitError{code: 1, msg: "Both json and template formatting are not allowed"}
			}
			if f.tmpl != "" {
				_, err := f.formatted(cmd, out)
				return err
			}
			return writeJSON(cmd, out)
		},
	}
	files.register(cmd)
	f.addAddress(cmd)
	cmd.Flags().Int64Var(&version, "version", -1, "print this stored version of the job")
	cmd.Flags().BoolVar(&hcl, "hcl", false, "print the source the job was submitted from")
	cmd.Flags().BoolVar(&withVars, "with-vars", false, "with -hcl, also print the variables it was submitted with")
	addOutputFlags(cmd, &f.json, &f.tmpl) // -json is what inspect prints without -t
	return cmd
}

// isJobFile reports whether arg names a job file rather than a job: "-"
// (stdin), or a path that exists.
func isJobFile(arg string) bool {
	if arg == "-" {
		return true
	}
	_, err := os.Stat(arg)
	if err == nil {
		return true
	}
	// A path that looks like a file and does not exist is still a file,
	// so that the error says so rather than "no job".
	return !errors.Is(err, fs.ErrNotExist) || strings.ContainsAny(arg, "/\\") ||
		strings.HasSuffix(arg, ".hcl") || strings.HasSuffix(arg, ".nomad") || strings.HasSuffix(arg, ".json")
}

// registeredJob reads a job from the servers: its current version, or
// version when it is not negative.
func (f *opFlags) registeredJob(cmd *cobra.Command, prefix string, version int64) (*structs.Job, error) {
	c, err := f.client()
	if err != nil {
		return nil, err
	}
	jobID, err := resolveJobID(cmd.Context(), c, cmd.OutOrStdout(), prefix)
	if err != nil {
		return nil, err
	}
	if version < 0 {
		job, _, err := c.Jobs().Info(cmd.Context(), jobID, nil)
		if err != nil {
			return nil, &exitError{code: 1, msg: fmt.Sprintf("Error inspecting job: %v", err)}
		}
		return job, nil
	}
	versions, _, err := c.Jobs().Versions(cmd.Context(), jobID, nil)
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error inspecting job: %v", err)}
	}
	for _, v := range versions {
		if v.Version == uint64(version) {
			return v, nil
		}
	}
	return nil, &exitError{code: 1, msg: fmt.Sprintf("Job %q has no version %d", jobID, version)}
}

// writeJSON prints v as indented JSON on stdout.
func writeJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "    ")
	return enc.Encode(v)
}
