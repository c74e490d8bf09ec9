package main

import (
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// printAllocStats prints each task's measured memory and CPU figures, as
// Nomad's alloc status -stats: GET /v1/client/allocation/{id}/stats, which
// the servers forward to the allocation's node.
func printAllocStats(cmd *cobra.Command, c *apiclient.Client, a *structs.Allocation) error {
	var usage structs.AllocResourceUsage
	if _, err := c.Get(cmd.Context(), "/v1/client/allocation/"+url.PathEscape(a.ID)+"/stats", nil, &usage); err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error querying the allocation's resource usage: %v", err)}
	}
	w := cmd.OutOrStdout()
	for _, name := range allocTaskNames(a) {
		t := usage.Tasks[name]
		if t == nil || t.ResourceUsage == nil {
			continue
		}
		fmt.Fprintf(w, "\nTask %q Resource Utilization\n", name)
		printResourceUsage(w, t.ResourceUsage)
	}
	return nil
}

func printResourceUsage(w io.Writer, u *structs.ResourceUsage) {
	if m := u.MemoryStats; m != nil && len(m.Measured) > 0 {
		measured := append([]string(nil), m.Measured...)
		sort.Strings(measured)
		values := map[string]uint64{"RSS": m.RSS, "Cache": m.Cache, "Swap": m.Swap, "Usage": m.Usage,
			"Max Usage": m.MaxUsage, "Kernel Usage": m.KernelUsage, "Kernel Max Usage": m.KernelMaxUsage}
		fmt.Fprintln(w, "Memory Stats")
		tw := newTabs(w)
		for i, k := range measured {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, k)
		}
		fmt.Fprintln(tw)
		for i, k := range measured {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, ibytes(values[k]))
		}
		fmt.Fprintln(tw)
		tw.Flush()
	}
	if cs := u.CpuStats; cs != nil && len(cs.Measured) > 0 {
		measured := append([]string(nil), cs.Measured...)
		sort.Strings(measured)
		pct := func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) + "%" }
		values := map[string]string{"Percent": pct(cs.Percent), "User Mode": pct(cs.UserMode), "System Mode": pct(cs.SystemMode),
			"Throttled Periods": fmt.Sprint(cs.ThrottledPeriods), "Throttled Time": fmt.Sprint(cs.ThrottledTime)}
		fmt.Fprintln(w, "CPU Stats")
		tw := newTabs(w)
		for i, k := range measured {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, k)
		}
		fmt.Fprintln(tw)
		for i, k := range measured {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, values[k])
		}
		fmt.Fprintln(tw)
		tw.Flush()
	}
}

// ibytes is n in binary units, as Nomad prints memory ("1.2 MiB").
func ibytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// printNodeStats prints a node's host figures, as Nomad's node status
// -stats: GET /v1/client/stats?node_id=, which the servers forward to the
// node.
func printNodeStats(cmd *cobra.Command, c *apiclient.Client, nodeID string) error {
	var h structs.HostStats
	q := &apiclient.QueryOptions{Params: map[string]string{"node_id": nodeID}}
	if _, err := c.Get(cmd.Context(), "/v1/client/stats", q, &h); err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("error fetching node stats: %v", err)}
	}
	w := cmd.OutOrStdout()
	pct := func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) + "%" }
	fmt.Fprintln(w, "\nCPU Stats")
	for i, s := range h.CPU {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printKV(w, [][2]string{{"CPU", s.CPU}, {"User", pct(s.User)}, {"System", pct(s.System)}, {"Idle", pct(s.Idle)}})
	}
	if m := h.Memory; m != nil {
		fmt.Fprintln(w, "\nMemory Stats")
		printKV(w, [][2]string{{"Total", ibytes(m.Total)}, {"Available", ibytes(m.Available)}, {"Used", ibytes(m.Used)}, {"Free", ibytes(m.Free)}})
	}
	fmt.Fprintln(w, "\nDisk Stats")
	for i, d := range h.DiskStats {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printKV(w, [][2]string{{"Device", d.Device}, {"MountPoint", d.Mountpoint}, {"Size", ibytes(d.Size)}, {"Used", ibytes(d.Used)},
			{"Available", ibytes(d.Available)}, {"Used Percent", pct(d.UsedPercent)}, {"Inodes Percent", pct(d.InodesUsedPercent)}})
	}
	return nil
}
