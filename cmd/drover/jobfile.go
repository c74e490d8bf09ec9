package main

import (
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
}

func (f *jobFileFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.vars, "var", nil, "set an input variable: -var key=value (repeatable)")
	cmd.Flags().StringArrayVar(&f.varFiles, "var-file", nil, "read input variables from an HCL or JSON file (repeatable)")
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
	job, warnings, err := jobspec.Parse(name, src, jobspec.Options{Vars: f.vars, VarFiles: f.varFiles, AllowFS: true})
	for _, w := range warnings {
		fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s\n", w.String())
	}
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error parsing job file %s:\n%v", name, err)}
	}
	return job, nil
}
