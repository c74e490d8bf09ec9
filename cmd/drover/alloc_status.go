package main

import (
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

// allocCommands are the subcommands of "drover alloc", registered by the
// alloc_*.go files.
var allocCommands = map[string]func() *cobra.Command{}

func init() {
	allocCommands["status"] = newAllocStatusCommand
	registerCommand("alloc", func() *cobra.Command {
		cmd := &cobra.Command{Use: "alloc", Short: "Inspect allocations and read their logs"}
		addSorted(cmd, allocCommands)
		return cmd
	})
}

// recentEventsShown is how many task events alloc status prints.
const recentEventsShown = 10

func newAllocStatusCommand() *cobra.Command {
	var address string
	var o outputFlags
	var v allocStatusView
	cmd := &cobra.Command{
		Use:   "status [flags] ALLOC",
		Short: "Show an allocation: placement, status, deployment health and task events",
		Long: `Shows the allocation with the given ID, or unique ID prefix: its placement,
client and desired status, deployment health, and for each task its
state, resources and most recent events, newest first. An ambiguous prefix
lists the matching allocations and exits 1.

-short prints one line per task (its state and last event) instead of its
resources and events; -verbose prints full IDs and every task event.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			a, err := lookupAlloc(cmd.Context(), c, cmd.OutOrStdout(), args[0])
			if err != nil {
				return asExit(err)
			}
			if o.set() {
				return o.write(cmd, a)
			}
			printAllocStatusView(cmd.OutOrStdout(), a, v)
			if v.stats {
				if err := printAllocStats(cmd, c, a); err != nil {
					return err
				}
			}
			return uiAfter(cmd, c, "/ui/allocations/"+url.PathEscape(a.ID))
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	cmd.Flags().BoolVar(&v.short, "short", false, "one line per task: its state and last event")
	cmd.Flags().BoolVar(&v.verbose, "verbose", false, "full IDs and every task event")
	addUIFlag(cmd, "allocation")
	cmd.Flags().BoolVar(&v.stats, "stats", false, "each task's measured memory and CPU figures (from the allocation's node)")
	return cmd
}

// allocStatusView are alloc status's display flags.
type allocStatusView struct{ short, verbose, stats bool }

func printAllocStatusView(w io.Writer, a *structs.Allocation, v allocStatusView) {
	idShort := idShort
	if v.verbose {
		idShort = func(s string) string { return s }
	}
	kv := [][2]string{
		{"ID", a.ID},
		{"Eval ID", idShort(a.EvalID)},
		{"Name", a.Name},
		{"Node ID", idShort(a.NodeID)},
		{"Node Name", a.NodeName},
		{"Job ID", a.JobID},
		{"Job Version", fmt.Sprint(a.JobVersion())},
		{"Client Status", a.ClientStatus},
		{"Client Description", orNone(a.ClientDescription)},
		{"Desired Status", a.DesiredStatus},
		{"Desired Description", orNone(a.DesiredDescription)},
		{"Created", fmtAgo(a.CreateTime)},
		{"Modified", fmtAgo(a.ModifyTime)},
	}
	if a.DeploymentID != "" {
		health := "unset"
		switch {
		case a.IsHealthy():
			health = "healthy"
		case a.IsUnhealthy():
			health = "unhealthy"
		}
		kv = append(kv, [2]string{"Deployment ID", idShort(a.DeploymentID)}, [2]string{"Deployment Health", health})
		if a.IsCanary() {
			kv = append(kv, [2]string{"Canary", "true"})
		}
	}
	if a.PreviousAllocation != "" {
		kv = append(kv, [2]string{"Replacement Of", idShort(a.PreviousAllocation)})
	}
	if a.NextAllocation != "" {
		kv = append(kv, [2]string{"Replaced By", idShort(a.NextAllocation)})
	}
	printKV(w, kv)

	if v.short {
		fmt.Fprintln(w, "\nTasks")
		tw := newTabs(w)
		fmt.Fprintln(tw, "Name\tState\tLast Event\tTime\tLifecycle")
		for _, name := range allocTaskNames(a) {
			st := a.TaskStates[name]
			state, event, at := "pending", "", ""
			if st != nil {
				if st.State != "" {
					state = st.State
				}
				if n := len(st.Events); n > 0 {
					event, at = st.Events[n-1].Type, fmtUnixNano(st.Events[n-1].Time)
				}
			}
			life := strings.Trim(lifecycleNote(a, name), " ()")
			if life == "" {
				life = "main"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, state, event, at, life)
		}
		tw.Flush()
		return
	}
	shown := recentEventsShown
	if v.verbose {
		shown = math.MaxInt
	}
	for _, name := range allocTaskNames(a) {
		st := a.TaskStates[name]
		state := "pending"
		if st != nil && st.State != "" {
			state = st.State
		}
		fmt.Fprintf(w, "\nTask %q%s is %q\n", name, lifecycleNote(a, name), state)
		if r := a.AllocatedResources; r != nil && r.Tasks[name] != nil {
			tr := r.Tasks[name]
			fmt.Fprintln(w, "Task Resources:")
			tw := newTabs(w)
			fmt.Fprintln(tw, "CPU\tMemory\tDisk")
			fmt.Fprintf(tw, "%d MHz\t%d MiB\t%d MiB\n", tr.Cpu.CpuShares, tr.Memory.MemoryMB, r.Shared.DiskMB)
			tw.Flush()
		}
		if st == nil {
			continue
		}
		fmt.Fprintln(w, "\nTask Events:")
		printKV(w, [][2]string{
			{"Started At", fmtTime(st.StartedAt)},
			{"Finished At", fmtTime(st.FinishedAt)},
			{"Total Restarts", fmt.Sprint(st.Restarts)},
			{"Last Restart", fmtTime(st.LastRestart)},
		})
		fmt.Fprintln(w, "\nRecent Events:")
		tw := newTabs(w)
		fmt.Fprintln(tw, "Time\tType\tDescription")
		events := st.Events
		for i := len(events) - 1; i >= 0 && len(events)-i <= shown; i-- {
			e := events[i]
			desc := e.DisplayMessage
			if desc == "" {
				desc = e.Message
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", fmtUnixNano(e.Time), e.Type, desc)
		}
		tw.Flush()
	}
}

// allocTaskNames returns the tasks of the allocation's group in the job's
// order, then any other task it has a state for.
// lifecycleNote is " (prestart)", " (poststart sidecar)"… for a lifecycle
// task, as Nomad's alloc status writes it after the task's name.
func lifecycleNote(a *structs.Allocation, task string) string {
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return ""
	}
	t := tg.LookupTask(task)
	if t == nil || t.IsMain() {
		return ""
	}
	if t.IsSidecar() {
		return " (" + t.Lifecycle.Hook + " sidecar)"
	}
	return " (" + t.Lifecycle.Hook + ")"
}

func allocTaskNames(a *structs.Allocation) []string {
	var names []string
	seen := map[string]bool{}
	if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil {
		for _, t := range tg.Tasks {
			names = append(names, t.Name)
			seen[t.Name] = true
		}
	}
	var extra []string
	for n := range a.TaskStates {
		if !seen[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}
