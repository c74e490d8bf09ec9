package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() {
	registerCommand("node", func() *cobra.Command {
		cmd := &cobra.Command{Use: "node", Short: "Inspect, drain and set the eligibility of client nodes"}
		cmd.AddCommand(newNodeStatusCommand(), newNodeDrainCommand(), newNodeEligibilityCommand())
		return cmd
	})
}

func newNodeStatusCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "status [flags] [NODE]",
		Short: "List client nodes, or show one node and its allocations",
		Long: `Without an argument, lists the client nodes. With a node ID (or a unique
prefix of one), shows the node: its pool, datacenter, status, drivers,
resources and allocations. An ambiguous prefix lists the matching nodes
and exits 1.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			if len(args) == 0 {
				nodes, _, err := c.Nodes().List(ctx, nil)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error querying nodes: %v", err)}
				}
				if o.set() {
					return o.write(cmd, nodes)
				}
				if len(nodes) == 0 {
					fmt.Fprintln(out, "No nodes registered")
					return nil
				}
				printNodeStubs(out, nodes)
				return nil
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
			printNodeStatus(out, n, allocs)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func printNodeStatus(w io.Writer, n *structs.Node, allocs []*structs.Allocation) {
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
