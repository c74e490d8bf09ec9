package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
)

// The specification var init writes, in HCL and JSON.
const varSpecHCL = `# A variable specification, for "drover var put @spec.nv.hcl".
#
# The path the variable is written at. It can be given on the command line
# instead ("drover var put PATH @spec.nv.hcl"), which wins over this one.
path = "a/path/to/your/variable"

# The namespace; -namespace on the command line wins over it.
# namespace = "default"

# The items are the variable's content, sealed on the servers as a whole.
# Each is a key and a string. Keys with dots work, but templates read
# them more easily without.
items {
  example_key = "example value"
  another     = "another value"
}
`

const varSpecJSON = `{
  "Namespace": "default",
  "Path": "a/path/to/your/variable",
  "Items": {
    "example_key": "example value",
    "another": "another value"
  }
}
`

func newVarInitCommand() *cobra.Command {
	var out string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "init [-out hcl|json] [FILE]",
		Short: "Write an example variable specification",
		Long: `Write an example variable specification to FILE (spec.nv.hcl, or spec.nv.json
with -out json), for var put. An existing file is never overwritten.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			content, name := varSpecHCL, "spec.nv.hcl"
			switch out {
			case "hcl":
			case "json":
				content, name = varSpecJSON, "spec.nv.json"
			default:
				return &exitError{code: 1, msg: fmt.Sprintf("Invalid -out value %q: hcl or json", out)}
			}
			if len(args) == 1 {
				name = args[0]
			}
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o660)
			if errors.Is(err, fs.ErrExist) {
				return &exitError{code: 1, msg: fmt.Sprintf("Variable specification %q already exists", name)}
			}
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to write %q: %v", name, err)}
			}
			if _, err := f.WriteString(content); err != nil {
				f.Close()
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to write %q: %v", name, err)}
			}
			if err := f.Close(); err != nil {
				return err
			}
			if !quiet {
				fmt.Fprintf(cmd.OutOrStdout(), "Example variable specification written to %s\n", name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "hcl", "format of the specification: hcl or json")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print nothing")
	return cmd
}
