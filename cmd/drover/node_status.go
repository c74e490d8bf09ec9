package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() {
	registerCommand("node", func() *cobra.Command {
		cmd := &cobra.Command{Use: "node", Short: "Inspect, drain and set the eligibility of client nodes"}
		cmd.AddCommand(newNodeStatusCommand(), newNodeDrainCommand(), newNodeEligibilityCommand())
		cmd.AddCommand(newNodeIdentityCommand(), newNodeIntroCommand()) // node_identity.go
		return cmd
	})
}

func newNodeStatusCommand() *cobra.Command {
	var address string
	var o outputFlags
	var v nodeStatusView
	var pages pageFlags
	cmd := &cobra.Command{
		Use:   "status [flags] [NODE]",
		Short: "List client nodes, or show one node and its allocations",
		Long: `Without an argument, lists the client nodes. With a node ID (or a unique
prefix of one), shows the node: its pool, datacenter, status, drivers,
resources and allocations. An ambiguous prefix lists the matching nodes
and exits 1.

-self shows the node of the agent at -address; -short leaves the node's
events, resources and allocations out; -verbose prints full IDs (and, for a
node, its attributes). In the list, -allocs adds each node's running
allocations, -os its operating system, and -quiet prints the IDs alone.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			if args, err = selfNode(cmd, address, v.self, args); err != nil {
				return err
			}
			if len(args) == 0 {
				nodes, _, err := c.Nodes().List(ctx, nil)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error querying nodes: %v", err)}
				}
				if nodes, err = filterItems(pages.filter, nodes); err != nil {
					return err
				}
				nodes, next := pageOf(pages, nodes, func(n *structs.NodeListStub) string { return n.ID })
				defer warnNextPage(cmd, next)
				if o.set() {
					return o.write(cmd, nodes)
				}
				if len(nodes) == 0 {
					fmt.Fprintln(out, "No nodes registered")
					return uiAfter(cmd, c, "/ui/nodes")
				}
				if err := printNodeList(cmd, c, nodes, v); err != nil {
					return err
				}
				return uiAfter(cmd, c, "/ui/nodes")
			}
			n, err := lookupNode(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			allocs, _, err := c.Nodes().Allocations(ctx, n.ID, nil)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying the node's allocations: %v", err)}
			}
			if o.set() {
				return o.write(cmd, n)
			}
			printNodeStatusView(out, n, allocs, v)
			if v.stats {
				if err := printNodeStats(cmd, c, n.ID); err != nil {
					return err
				}
			}
			return uiAfter(cmd, c, "/ui/nodes")
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	f := cmd.Flags()
	f.BoolVar(&v.self, "self", false, "the node of the agent at -address")
	f.BoolVar(&v.short, "short", false, "the node's lines only")
	f.BoolVar(&v.verbose, "verbose", false, "full IDs, and a node's attributes")
	f.BoolVar(&v.allocs, "allocs", false, "the list: each node's running allocations")
	f.BoolVar(&v.os, "os", false, "the list: each node's operating system")
	f.BoolVar(&v.quiet, "quiet", false, "the list: node IDs alone")
	addUIFlag(cmd, "nodes")
	f.BoolVar(&v.stats, "stats", false, "a node's host CPU, memory and disk figures (from the node)")
	pages.add(cmd)
	pages.addFilter(cmd)
	return cmd
}

// nodeStatusView are node status's display flags.
type nodeStatusView struct{ self, short, verbose, allocs, os, quiet, stats bool }

// printNodeList prints the nodes table with the columns the flags ask for.
func printNodeList(cmd *cobra.Command, c *apiclient.Client, nodes []*structs.NodeListStub, v nodeStatusView) error {
	out := cmd.OutOrStdout()
	if v.quiet {
		for _, n := range nodes {
			id := n.ID
			if !v.verbose {
				id = idShort(id)
			}
			fmt.Fprintln(out, id)
		}
		return nil
	}
	if !v.allocs && !v.os && !v.verbose {
		printNodeStubs(out, nodes)
		return nil
	}
	running := map[string]int{}
	if v.allocs {
		allocs, _, err := c.Allocations().List(cmd.Context(), &apiclient.QueryOptions{Namespace: "*"})
		if err != nil {
			return &exitError{code: 1, msg: fmt.Sprintf("Error querying allocations: %v", err)}
		}
		for _, a := range allocs {
			if a.ClientStatus == structs.AllocClientStatusRunning {
				running[a.NodeID]++
			}
		}
	}
	oses := map[string]string{}
	if v.os {
		for _, n := range nodes {
			full, _, err := c.Nodes().Info(cmd.Context(), n.ID, nil)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying node %s: %v", n.ID, err)}
			}
			oses[n.ID] = orNone(strings.TrimSpace(full.Attributes["os.name"] + " " + full.Attributes["os.version"]))
		}
	}
	tw := newTabs(out)
	head := "ID\tNode Pool\tDC\tName\tClass"
	if v.verbose {
		head += "\tAddress\tVersion"
	}
	if v.os {
		head += "\tOS"
	}
	head += "\tDrain\tEligibility\tStatus"
	if v.allocs {
		head += "\tRunning Allocs"
	}
	fmt.Fprintln(tw, head)
	for _, n := range nodes {
		id := idShort(n.ID)
		if v.verbose {
			id = n.ID
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", id, n.NodePool, n.Datacenter, n.Name, orNone(n.NodeClass))
		if v.verbose {
			line += fmt.Sprintf("\t%s\t%s", orNone(n.Address), orNone(n.Version))
		}
		if v.os {
			line += "\t" + oses[n.ID]
		}
		line += fmt.Sprintf("\t%t\t%s\t%s", n.Drain, n.SchedulingEligibility, n.Status)
		if v.allocs {
			line += fmt.Sprintf("\t%d", running[n.ID])
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

func printNodeStatusView(w io.Writer, n *structs.Node, allocs []*structs.Allocation, v nodeStatusView) {
	var drivers []string
	for name, d := range n.Drivers {
		if d != nil && d.Detected && d.Healthy {
			drivers = append(drivers, name)
		}
	}
	sort.Strings(drivers)
	kv := [][2]string{
		{"ID", n.ID},
		{"Name", n.Name},
		{"Node Pool", n.NodePool},
		{"Class", orNone(n.NodeClass)},
		{"DC", n.Datacenter},
		{"HTTP Addr", orNone(n.HTTPAddr)},
		{"Drain", formatDrain(n)},
		{"Eligibility", n.SchedulingEligibility},
		{"Status", n.Status},
		{"Status Description", orNone(n.StatusDescription)},
		{"Drivers", orNone(strings.Join(drivers, ","))},
	}
	if ld := n.LastDrain; ld != nil {
		last := ld.Status + ", started " + fmtTime(ld.StartedAt) + ", updated " + fmtTime(ld.UpdatedAt)
		if msg := ld.Meta["message"]; msg != "" {
			last += fmt.Sprintf("; %q", msg)
		}
		kv = append(kv, [2]string{"Last Drain", last})
	}
	printKV(w, kv)
	if v.short {
		return
	}
	if v.verbose && len(n.Attributes) > 0 {
		fmt.Fprintln(w, "\nAttributes")
		var attrs [][2]string
		for _, k := range sortedKeys(n.Attributes) {
			attrs = append(attrs, [2]string{k, n.Attributes[k]})
		}
		printKV(w, attrs)
	}

	if len(n.Events) > 0 {
		fmt.Fprintln(w, "\nNode Events")
		tw := newTabs(w)
		fmt.Fprintln(tw, "Time\tSubsystem\tMessage")
		// Newest first, as Nomad's.
		for i := len(n.Events) - 1; i >= 0; i-- {
			e := n.Events[i]
			msg := e.Message
			if len(e.Details) > 0 {
				var ds []string
				for _, k := range sortedKeys(e.Details) {
					ds = append(ds, k+": "+e.Details[k])
				}
				msg += " (" + strings.Join(ds, ", ") + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", fmtTime(e.Timestamp), e.Subsystem, msg)
		}
		tw.Flush()
	}

	capacity := n.Capacity()
	var used structs.ComparableResources
	var running []*structs.AllocationListStub
	for _, a := range allocs {
		if !a.TerminalStatus() {
			r := a.AllocatedResources.Comparable()
			used.CPU += r.CPU
			used.MemoryMB += r.MemoryMB
			used.DiskMB += r.DiskMB
		}
		running = append(running, a.Stub())
	}
	fmt.Fprintln(w, "\nAllocated Resources")
	tw := newTabs(w)
	fmt.Fprintln(tw, "CPU\tMemory\tDisk")
	fmt.Fprintf(tw, "%d/%d MHz\t%d MiB/%d MiB\t%d MiB/%d MiB\n", used.CPU, capacity.CPU, used.MemoryMB, capacity.MemoryMB, used.DiskMB, capacity.DiskMB)
	tw.Flush()

	fmt.Fprintln(w, "\nAllocations")
	if len(running) == 0 {
		fmt.Fprintln(w, "No allocations placed")
		return
	}
	if v.verbose {
		printAllocStubsFull(w, running)
		return
	}
	printAllocStubs(w, running)
}

// formatDrain is a node's Drain line, as Nomad's: "false", or "true" with
// the deadline ("force drain", "no deadline" or its time) and whether
// system jobs are ignored.
func formatDrain(n *structs.Node) string {
	d := n.DrainStrategy
	if d == nil {
		return fmt.Sprint(n.Drain)
	}
	var b strings.Builder
	b.WriteString("true")
	switch {
	case d.Deadline < 0:
		b.WriteString("; force drain")
	case d.ForceDeadline.IsZero():
		b.WriteString("; no deadline")
	default:
		fmt.Fprintf(&b, "; %s deadline", fmtTime(d.ForceDeadline))
	}
	if d.IgnoreSystemJobs {
		b.WriteString("; ignoring system jobs")
	}
	return b.String()
}
