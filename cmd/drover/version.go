package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// Version is drover's version; the build may override it with
// -ldflags "-X main.Version=...".
var Version = "0.1.0-dev"

func init() { registerCommand("version", newVersionCommand) }

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print drover's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "Drover v%s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
