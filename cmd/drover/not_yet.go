package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// Commands of Nomad's that drover accepts, with every flag of Nomad's, and
// answers with an error that says why it does not run them yet: the
// servers lack what they act on. A script that calls one fails with that
// reason rather than "unknown command".

// notYet are those commands, by path, with the reason.
var notYet = map[string]string{}

func init() {
	for path, why := range notYet {
		registerSubcommand(path, func() *cobra.Command { return newNotYetCommand(path, why) })
	}
}

// newNotYetCommand is the command at path, refused with why; the flags of
// Nomad's command are added with the tree's (completeNomadFlags).
func newNotYetCommand(path, why string) *cobra.Command {
	words := strings.Fields(path)
	var address string
	cmd := &cobra.Command{
		Use:                words[len(words)-1] + " [flags] [args]",
		Short:              "Not supported by drover yet: " + why,
		Args:               cobra.ArbitraryArgs,
		DisableFlagParsing: false,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return &exitError{code: 1, msg: "Error: drover " + path + " is not supported by drover yet: " + why}
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}
