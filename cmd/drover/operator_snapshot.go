package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
)

func init() { operatorCommands["snapshot"] = newOperatorSnapshotCommand }

// newOperatorSnapshotCommand is "drover operator snapshot save|restore".
func newOperatorSnapshotCommand() *cobra.Command {
	snap := &cobra.Command{
		Use:   "snapshot",
		Short: "Save and restore snapshots of the cluster's state",
		Long: `Save a snapshot of the cluster's replicated state to a file (a backup), or
restore one on every server. The file is a gzip'd tar holding meta.json,
state.bin and SHA256SUMS.`,
	}
	snap.AddCommand(newSnapshotSaveCommand(), newSnapshotRestoreCommand())
	return snap
}

func newSnapshotSaveCommand() *cobra.Command {
	var address string
	var stale bool
	cmd := &cobra.Command{
		Use:   "save FILE",
		Short: "Save a snapshot of the cluster's state to FILE",
		Long: `Save a snapshot of the cluster's state to FILE. The leader takes it, or with
-stale the server at -address from its own copy (useful without a leader).

  drover operator snapshot save backup.snap`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			path := args[0]
			// Write beside the target and rename, so that a failed save
			// never leaves a truncated file under the name given.
			tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
			if err != nil {
				return fmt.Errorf("creating snapshot file: %w", err)
			}
			defer os.Remove(tmp.Name())
			_, err = c.Operator().SnapshotSave(cmd.Context(), tmp, &apiclient.QueryOptions{AllowStale: stale})
			if cerr := tmp.Close(); err == nil && cerr != nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("saving snapshot: %w", err)
			}
			if err := os.Rename(tmp.Name(), path); err != nil {
				return fmt.Errorf("saving snapshot: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "State file written to %s\n", path)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&stale, "stale", false, "let the server at -address answer from its own copy instead of the leader")
	return cmd
}

func newSnapshotRestoreCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Restore a snapshot from FILE on every server",
		Long: `Restore a snapshot saved by "drover operator snapshot save" on every server of
the cluster, through the leader. Everything written since the snapshot is
lost: this is for disaster recovery.

  drover operator snapshot restore backup.snap`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return fmt.Errorf("opening snapshot: %w", err)
			}
			defer f.Close()
			if st, err := f.Stat(); err == nil && st.IsDir() {
				return errors.New("snapshot path is a directory")
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if _, err := c.Operator().SnapshotRestore(cmd.Context(), f); err != nil {
				return fmt.Errorf("restoring snapshot: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Snapshot Restored")
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}
