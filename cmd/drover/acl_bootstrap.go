package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func newACLBootstrapCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "bootstrap [SECRET-FILE]",
		Short: "Create the first management token, once",
		Long: `Bootstrap the ACL system: create the first management token and print it,
with its Secret ID, which is shown this once. A second bootstrap is refused
("ACL bootstrap already done (reset index: N)"); see website/security.md for
the reset. SECRET-FILE, when given ("-" for standard input), holds the UUID to
use as the token's Secret ID.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var secret string
			if len(args) == 1 {
				var b []byte
				var err error
				if args[0] == "-" {
					b, err = io.ReadAll(cmd.InOrStdin())
				} else {
					b, err = os.ReadFile(args[0])
				}
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error reading the bootstrap secret: %v", err)}
				}
				secret = strings.TrimSpace(string(b))
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			tok, err := c.ACLBootstrap(cmd.Context(), secret)
			if err != nil {
				return aclFailed("bootstrapping", err)
			}
			if o.set() {
				return o.write(cmd, tok)
			}
			printACLToken(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}
