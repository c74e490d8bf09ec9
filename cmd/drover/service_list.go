package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func newServiceListCommand() *cobra.Command {
	var f serviceFlags
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List the services registered in a namespace, with their tags",
		Long: `Lists the services with provider "nomad" that running allocations register
in the namespace (-namespace, "*" for every namespace the token may read):
each service's name and the union of its instances' tags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			list, err := listServices(cmd.Context(), c, f.ns(cmd))
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error listing service registrations: %v", err)}
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No service registrations found")
				return nil
			}
			if ok, err := f.formatted(cmd, list); ok {
				return err
			}
			printServiceList(cmd.OutOrStdout(), list, f.ns(cmd) == "*")
			return nil
		},
	}
	f.addAddress(cmd)
	f.addJSON(cmd)
	f.addNamespace(cmd)
	cmd.Flags().String("name", "", "accepted as Nomad's: Nomad's service list reads it and does not use it either")
	return cmd
}

// printServiceList prints Nomad's table: the service's name, its
// namespace when listing all, and its tags.
func printServiceList(w io.Writer, list []*structs.ServiceRegistrationListStub, allNamespaces bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "Service Name"
	if allNamespaces {
		header += "\tNamespace"
	}
	fmt.Fprintln(tw, header+"\tTags")
	for _, ns := range list {
		for _, s := range ns.Services {
			row := s.ServiceName
			if allNamespaces {
				row += "\t" + ns.Namespace
			}
			fmt.Fprintf(tw, "%s\t[%s]\n", row, strings.Join(s.Tags, ","))
		}
	}
	_ = tw.Flush()
}
