package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func init() { registerCommand("status", newStatusCommand) }

// statusContexts maps a search context to the command that shows one of
// its objects, in the order matches are listed.
var statusContexts = []struct{ context, kind, command string }{
	{"jobs", "Jobs", "job status"},
	{"deployment", "Deployments", "deployment status"},
	{"evals", "Evaluations", "eval status"},
	{"allocs", "Allocations", "alloc status"},
	{"nodes", "Nodes", "node status"},
}

func newStatusCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "status [flags] [ID]",
		Short: "Show whatever an ID or prefix names: a job, deployment, evaluation, allocation or node",
		Long: `Without an argument, lists the jobs (as job status). With an ID, a unique
prefix of one, or a job name, finds what it names among the jobs,
deployments, evaluations, allocations and nodes, and shows it as that
object's status command does. A prefix that matches several objects lists
them and exits 1; one that matches nothing exits 1.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return runSub(cmd, address, "job", "status")
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var resp struct {
				Matches     map[string][]string
				Truncations map[string]bool
			}
			body := map[string]string{"Prefix": args[0], "Context": "all"}
			if _, err := c.Put(cmd.Context(), "/v1/search", body, &resp); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying search with id: %v", err)}
			}
			// A job named exactly so wins, as IDs of other objects are UUIDs.
			for _, id := range resp.Matches["jobs"] {
				if id == args[0] {
					return runSub(cmd, address, "job", "status", id)
				}
			}
			var found []string
			var only struct{ command, id string }
			for _, sc := range statusContexts {
				for _, id := range resp.Matches[sc.context] {
					found = append(found, id)
					only.command, only.id = sc.command, id
				}
			}
			switch len(found) {
			case 0:
				return &exitError{code: 1, msg: fmt.Sprintf("No matches found for %q", args[0])}
			case 1:
				return runSub(cmd, address, append(strings.Fields(only.command), only.id)...)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Prefix matched multiple objects\n")
			for _, sc := range statusContexts {
				ids := resp.Matches[sc.context]
				if len(ids) == 0 {
					continue
				}
				sort.Strings(ids)
				fmt.Fprintf(w, "\n%s\n", sc.kind)
				for _, id := range ids {
					fmt.Fprintln(w, id)
				}
				if resp.Truncations[sc.context] {
					fmt.Fprintln(w, "(more not shown)")
				}
			}
			return exitCode(1)
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().Bool("verbose", false, "full IDs, as the status command of what the ID names prints them")
	addUIFlag(cmd, "object")
	return cmd
}

// passedOn are the flags of status that the command it runs gets: the
// global flags and -verbose.
var passedOn = map[string]bool{
	"address": true, "region": true, "namespace": true, "token": true, "ca-cert": true, "ca-path": true,
	"client-cert": true, "client-key": true, "tls-server-name": true, "tls-skip-verify": true, "insecure": true,
	"no-color": true, "force-color": true, "verbose": true, "ui": true,
}

// runSub runs another drover command in this process with the same
// global flags (and -verbose) and output.
func runSub(cmd *cobra.Command, address string, args ...string) error {
	root := newRootCommand()
	full := append([]string{}, args[:2]...)
	if address != "" {
		full = append(full, "-address", address)
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if passedOn[f.Name] && f.Name != "address" {
			full = append(full, "--"+f.Name+"="+f.Value.String())
		}
	})
	full = append(full, args[2:]...)
	root.SetArgs(normalizeArgs(full))
	root.SetIn(cmd.InOrStdin())
	root.SetOut(cmd.OutOrStdout())
	root.SetErr(cmd.ErrOrStderr())
	return root.ExecuteContext(cmd.Context())
}
