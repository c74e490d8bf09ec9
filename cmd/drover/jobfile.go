package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
	"github.com/spf13/cobra"
)

// jobFileFlags are the flags every command that reads a job file takes.
type jobFileFlags struct {
	vars     []string
	varFiles []string
	// json and strict are Nomad's -json (the file is JSON) and
	// -hcl2-strict, for the commands that take them (registerInput).
	json, strict bool
	// sub is the submission of the file loadJob read last
	// (job_submission.go).
	sub *structs.JobSubmission
}

func (f *jobFileFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.vars, "var", nil, "set an input variable: -var key=value (repeatable)")
	cmd.Flags().StringArrayVar(&f.varFiles, "var-file", nil, "read input variables from an HCL or JSON file (repeatable)")
}

// registerInput adds Nomad's -json and -hcl2-strict, of the commands
// that submit or validate a job file (job run, plan, validate).
func (f *jobFileFlags) registerInput(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.json, "json", false, `the file is a job in Nomad's API JSON, a {"Job": …} envelope unwrapped (JSON is read as JSON either way)`)
	cmd.Flags().BoolVar(&f.strict, "hcl2-strict", true, "refuse undeclared variables; drover always does (false is refused)")
}

// loadJob reads and parses the job file at path ("-" for stdin). Warnings
// are printed to stderr; an invalid file yields an exitError carrying every
// located problem.
func (f *jobFileFlags) loadJob(cmd *cobra.Command, path string) (*structs.Job, error) {
	var (
		src []byte
		err error
	)
	name := path
	if path == "-" {
		name = "<stdin>"
		src, err = io.ReadAll(cmd.InOrStdin())
	} else {
		src, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error reading job file: %v", err)}
	}
	if cmd.Flags().Changed("hcl2-strict") && !f.strict {
		return nil, &exitError{code: 1, msg: "Error: -hcl2-strict=false is not supported by drover: a variable the file does not declare is always an error"}
	}
	if trimmed := bytes.TrimLeft(src, " \t\r\n\ufeff"); len(trimmed) > 0 && trimmed[0] == '{' {
		src = unwrapJobEnvelope(src)
	} else if f.json {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error parsing job file %s: -json is given but the file is not JSON", name)}
	}
	job, warnings, err := jobspec.Parse(name, src, jobspec.Options{Vars: f.vars, VarFiles: f.varFiles, AllowFS: true})
	for _, w := range warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s\n", w.String())
	}
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error parsing job file %s:\n%v", name, err)}
	}
	f.sub = jobSubmissionOf(src, f.vars, f.varFiles)
	// A job file that names no namespace runs in the one -namespace (or
	// NOMAD_NAMESPACE) names, as Nomad's.
	if ns := namespaceFlag(cmd); ns != "" && job.Namespace == structs.DefaultNamespace {
		job.Namespace = ns
	}
	return job, nil
}

// unwrapJobEnvelope returns the job of {"Job": {…}} (what job inspect and
// job run -output print), src itself otherwise.
func unwrapJobEnvelope(src []byte) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(src, &env) != nil || len(env) != 1 {
		return src
	}
	if j, ok := env["Job"]; ok && len(j) > 0 && j[0] == '{' {
		return j
	}
	return src
}
