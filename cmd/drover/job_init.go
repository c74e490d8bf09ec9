package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
)

func init() { registerJobCommand("init", newJobInitCommand) }

// The example job `job init` writes, as Nomad's: a commented one, and a
// short one without comments. A test keeps both valid.
var (
	//go:embed assets/example.nomad.hcl
	exampleJob string
	//go:embed assets/example-short.nomad.hcl
	exampleJobShort string
)

// defaultInitFile is Nomad's default name for the example job.
const defaultInitFile = "example.nomad.hcl"

func newJobInitCommand() *cobra.Command {
	var short bool
	cmd := &cobra.Command{
		Use:   "init [flags] [FILE]",
		Short: "Write an example job file to start from",
		Long: `Writes a commented example job (a service of two allocations with an http
check, rolled out one at a time) to FILE, example.nomad.hcl by default. An
existing file is never overwritten. -short leaves the comments out.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := defaultInitFile
			if len(args) == 1 {
				file = args[0]
			}
			content := exampleJob
			if short {
				content = exampleJobShort
			}
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return &exitError{code: 1, msg: fmt.Sprintf("Job file %q already exists", file)}
			}
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to write %q: %v", file, err)}
			}
			if _, err := f.WriteString(content); err != nil {
				_ = f.Close()
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to write %q: %v", file, err)}
			}
			if err := f.Close(); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to write %q: %v", file, err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Example job file written to %s\n", file)
			return nil
		},
	}
	cmd.Flags().BoolVar(&short, "short", false, "write the example without comments")
	return cmd
}
