package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() { operatorCommands["root"] = newOperatorRootCommand }

// newOperatorRootCommand is "drover operator root keyring": the keyring
// that seals variables, as Nomad's.
func newOperatorRootCommand() *cobra.Command {
	root := &cobra.Command{Use: "root", Short: "Manage the root keys"}
	kr := &cobra.Command{Use: "keyring", Short: "List, rotate and remove the root keys that seal variables"}
	kr.AddCommand(newKeyringListCommand(), newKeyringRotateCommand(), newKeyringRemoveCommand())
	root.AddCommand(kr)
	return root
}

func printRootKeys(w io.Writer, keys []*structs.RootKeyMeta, verbose bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Key\tState\tCreate Time")
	for _, k := range keys {
		id := k.KeyID
		if !verbose && len(id) > 8 {
			id = id[:8]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", id, k.State, formatTime(k.CreateTime))
	}
	return tw.Flush()
}

func newKeyringListCommand() *cobra.Command {
	var address string
	var verbose bool
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the root keys (never their material)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			keys, err := c.KeyringList(cmd.Context())
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("error: %v", err)}
			}
			if o.set() {
				return o.write(cmd, keys)
			}
			return printRootKeys(cmd.OutOrStdout(), keys, verbose)
		},
	}
	cmd.Flags().BoolVar(&verbose, "verbose", false, "show the whole key IDs")
	o.add(cmd)
	addAddressFlag(cmd, &address)
	return cmd
}

func newKeyringRotateCommand() *cobra.Command {
	var address string
	var verbose, full bool
	cmd := &cobra.Command{
		Use:   "rotate",
		Short: "Make a new active root key",
		Long: `Make a new root key, active from now on: new variables are sealed with it.
The old keys stay, inactive, to open what they sealed; with -full, every
variable is sealed again with the new key before the command returns.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			k, err := c.KeyringRotate(cmd.Context(), full)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("error: %v", err)}
			}
			return printRootKeys(cmd.OutOrStdout(), []*structs.RootKeyMeta{k}, verbose)
		},
	}
	cmd.Flags().BoolVar(&verbose, "verbose", false, "show the whole key ID")
	cmd.Flags().BoolVar(&full, "full", false, "encrypt every variable again with the new key, before answering")
	cmd.Flags().Bool("now", false, "accepted as Nomad's: drover publishes the new key at once")
	addAddressFlag(cmd, &address)
	return cmd
}

func newKeyringRemoveCommand() *cobra.Command {
	var address string
	var force bool
	cmd := &cobra.Command{
		Use:   "remove [-force] KEY_ID",
		Short: "Remove an inactive root key",
		Long: `Remove the inactive root key KEY_ID (its whole ID, as list -verbose shows it).
A key that still encrypts variables is refused unless -force, after which
those variables can no longer be read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if err := c.KeyringDelete(cmd.Context(), args[0], force); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("error: %v", err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed encryption key %s\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove the key even if variables are still encrypted with it")
	addAddressFlag(cmd, &address)
	return cmd
}
