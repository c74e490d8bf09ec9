package main

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func newServiceInfoCommand() *cobra.Command {
	var f serviceFlags
	var pages pageFlags
	cmd := &cobra.Command{
		Use:   "info [flags] NAME",
		Short: "Show the registrations of one service",
		Long: `Shows the instances of the service NAME in the namespace: for each, its job,
address and port, tags, node and allocation, grouped by job. -verbose shows
every field of each registration, full IDs included.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			regs, err := serviceRegistrations(cmd.Context(), c, f.ns(cmd), args[0])
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error listing service registrations: %v", err)}
			}
			if regs, err = filterItems(pages.filter, regs); err != nil {
				return err
			}
			regs, next := pageOf(pages, regs, func(r *structs.ServiceRegistration) string { return r.ID })
			defer warnNextPage(cmd, next)
			if len(regs) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No service registrations found")
				return nil
			}
			if ok, err := f.formatted(cmd, regs); ok {
				return err
			}
			// By job, each job's instances in the order the API gave them.
			slices.SortStableFunc(regs, func(a, b *structs.ServiceRegistration) int { return strings.Compare(a.JobID, b.JobID) })
			if f.verbose {
				printServiceRegistrations(cmd.OutOrStdout(), regs)
			} else {
				f.printServiceTable(cmd.OutOrStdout(), regs)
			}
			return nil
		},
	}
	f.addAddress(cmd)
	f.addVerbose(cmd)
	f.addJSON(cmd)
	f.addNamespace(cmd)
	pages.addFilter(cmd)
	pages.add(cmd)
	return cmd
}

// serviceAddress is address:port, or the address alone without a port.
func serviceAddress(r *structs.ServiceRegistration) string {
	if r.Port == 0 {
		return r.Address
	}
	return net.JoinHostPort(r.Address, strconv.Itoa(r.Port))
}

// printServiceTable prints Nomad's table of a service's instances.
func (f *serviceFlags) printServiceTable(w io.Writer, regs []*structs.ServiceRegistration) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Job ID\tAddress\tTags\tNode ID\tAlloc ID")
	for _, r := range regs {
		fmt.Fprintf(tw, "%s\t%s\t[%s]\t%s\t%s\n", r.JobID, serviceAddress(r), strings.Join(r.Tags, ","), f.short(r.NodeID), f.short(r.AllocID))
	}
	_ = tw.Flush()
}

// printServiceRegistrations prints each registration's fields, as
// Nomad's -verbose does.
func printServiceRegistrations(w io.Writer, regs []*structs.ServiceRegistration) {
	for _, r := range regs {
		tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
		fmt.Fprintf(tw, "ID\t= %s\n", r.ID)
		fmt.Fprintf(tw, "Service Name\t= %s\n", r.ServiceName)
		fmt.Fprintf(tw, "Namespace\t= %s\n", r.Namespace)
		fmt.Fprintf(tw, "Job ID\t= %s\n", r.JobID)
		fmt.Fprintf(tw, "Alloc ID\t= %s\n", r.AllocID)
		fmt.Fprintf(tw, "Node ID\t= %s\n", r.NodeID)
		fmt.Fprintf(tw, "Datacenter\t= %s\n", r.Datacenter)
		fmt.Fprintf(tw, "Address\t= %s\n", serviceAddress(r))
		fmt.Fprintf(tw, "Tags\t= [%s]\n", strings.Join(r.Tags, ","))
		_ = tw.Flush()
		fmt.Fprintln(w)
	}
}
