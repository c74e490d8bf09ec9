package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// Helpers of the commands that read the cluster's objects: finding one by
// a unique ID prefix, and printing in Nomad's layouts.

// statusClock is the clock the status commands count "ago" from.
var statusClock = time.Now

// idShort is the 8-character form of an ID Nomad prints.
func idShort(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// pickByPrefix resolves prefix among the IDs a list query returned: an
// exact match wins; none is an error; several print the matches (via
// table) and fail with exit code 1.
func pickByPrefix(w io.Writer, kind, prefix string, ids []string, table func(io.Writer)) (string, error) {
	for _, id := range ids {
		if id == prefix {
			return id, nil
		}
	}
	switch len(ids) {
	case 0:
		return "", &exitError{code: 1, msg: fmt.Sprintf("No %s(s) with prefix or id %q found", kind, prefix)}
	case 1:
		return ids[0], nil
	}
	fmt.Fprintf(w, "Prefix matched multiple %ss\n\n", kind)
	table(w)
	return "", exitCode(1)
}

// lookupAlloc returns the allocation whose ID is id or starts with it.
func lookupAlloc(ctx context.Context, c *apiclient.Client, w io.Writer, prefix string) (*structs.Allocation, error) {
	return lookupAllocVerbose(ctx, c, w, prefix, false)
}

// lookupAllocVerbose is lookupAlloc; with verbose, the table of the
// allocations a prefix matches shows full IDs, as Nomad's -verbose.
func lookupAllocVerbose(ctx context.Context, c *apiclient.Client, w io.Writer, prefix string, verbose bool) (*structs.Allocation, error) {
	stubs, _, err := c.Allocations().List(ctx, &apiclient.QueryOptions{Prefix: prefix, Namespace: "*"})
	if err != nil {
		return nil, fmt.Errorf("querying allocations: %w", err)
	}
	ids := make([]string, len(stubs))
	for i, s := range stubs {
		ids[i] = s.ID
	}
	table := func(w io.Writer) { printAllocStubs(w, stubs) }
	if verbose {
		table = func(w io.Writer) {
			tw := newTabs(w)
			fmt.Fprintln(tw, "ID\tNode ID\tTask Group\tVersion\tDesired\tStatus")
			for _, a := range stubs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", a.ID, a.NodeID, a.TaskGroup, a.JobVersion, a.DesiredStatus, a.ClientStatus)
			}
			tw.Flush()
		}
	}
	id, err := pickByPrefix(w, "allocation", prefix, ids, table)
	if err != nil {
		return nil, err
	}
	a, _, err := c.Allocations().Info(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("querying allocation %s: %w", id, err)
	}
	return a, nil
}

// lookupEval returns the evaluation whose ID is id or starts with it.
func lookupEval(ctx context.Context, c *apiclient.Client, w io.Writer, prefix string) (*structs.Evaluation, error) {
	evals, _, err := c.Evaluations().List(ctx, &apiclient.QueryOptions{Prefix: prefix, Namespace: "*"})
	if err != nil {
		return nil, fmt.Errorf("querying evaluations: %w", err)
	}
	ids := make([]string, len(evals))
	for i, e := range evals {
		ids[i] = e.ID
	}
	id, err := pickByPrefix(w, "evaluation", prefix, ids, func(w io.Writer) {
		tw := newTabs(w)
		fmt.Fprintln(tw, "ID\tPriority\tTriggered By\tJob ID\tStatus")
		for _, e := range evals {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", idShort(e.ID), e.Priority, e.TriggeredBy, e.JobID, e.Status)
		}
		tw.Flush()
	})
	if err != nil {
		return nil, err
	}
	e, _, err := c.Evaluations().Info(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("querying evaluation %s: %w", id, err)
	}
	return e, nil
}

// lookupNode returns the node whose ID is id or starts with it.
func lookupNode(ctx context.Context, c *apiclient.Client, w io.Writer, prefix string) (*structs.Node, error) {
	nodes, _, err := c.Nodes().List(ctx, &apiclient.QueryOptions{Prefix: prefix})
	if err != nil {
		return nil, fmt.Errorf("querying nodes: %w", err)
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	id, err := pickByPrefix(w, "node", prefix, ids, func(w io.Writer) { printNodeStubs(w, nodes) })
	if err != nil {
		return nil, err
	}
	n, _, err := c.Nodes().Info(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("querying node %s: %w", id, err)
	}
	return n, nil
}

// lookupJob returns the job whose ID is id or starts with it.
func lookupJob(ctx context.Context, c *apiclient.Client, w io.Writer, prefix string) (*structs.Job, error) {
	jobs, _, err := c.Jobs().List(ctx, &apiclient.QueryOptions{Prefix: prefix})
	if err != nil {
		return nil, fmt.Errorf("querying jobs: %w", err)
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	id, err := pickByPrefix(w, "job", prefix, ids, func(w io.Writer) { printJobStubs(w, jobs) })
	if err != nil {
		return nil, err
	}
	j, _, err := c.Jobs().Info(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("querying job %s: %w", id, err)
	}
	return j, nil
}

// newTabs is the tabwriter of Nomad's column tables.
func newTabs(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// printKV prints "Key = value" lines with the "=" aligned, as Nomad.
func printKV(w io.Writer, pairs [][2]string) {
	width := 0
	for _, p := range pairs {
		width = max(width, len(p[0]))
	}
	for _, p := range pairs {
		fmt.Fprintf(w, "%-*s = %s\n", width, p[0], p[1])
	}
}

// fmtUnixNano formats a UnixNano time as RFC 3339, "N/A" when unset.
func fmtUnixNano(ns int64) string {
	if ns == 0 {
		return "N/A"
	}
	return fmtTime(time.Unix(0, ns))
}

// fmtTime formats t as RFC 3339 in UTC, "N/A" when zero.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "N/A"
	}
	return t.UTC().Format(time.RFC3339)
}

// fmtAgo formats a UnixNano time relative to now: "5m ago".
func fmtAgo(ns int64) string {
	if ns == 0 {
		return "N/A"
	}
	d := statusClock().Sub(time.Unix(0, ns)).Round(time.Second)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds ago", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm ago", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmtUnixNano(ns)
}

// orNone is Nomad's "<none>" for an empty value.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// printAllocStubs prints Nomad's allocations table, newest first.
func printAllocStubs(w io.Writer, stubs []*structs.AllocationListStub) {
	sorted := append([]*structs.AllocationListStub(nil), stubs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].CreateIndex > sorted[j].CreateIndex })
	tw := newTabs(w)
	fmt.Fprintln(tw, "ID\tNode ID\tTask Group\tVersion\tDesired\tStatus\tCreated\tModified")
	for _, a := range sorted {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", idShort(a.ID), idShort(a.NodeID), a.TaskGroup,
			a.JobVersion, a.DesiredStatus, a.ClientStatus, fmtAgo(a.CreateTime), fmtAgo(a.ModifyTime))
	}
	tw.Flush()
}

// printNodeStubs prints Nomad's nodes table.
func printNodeStubs(w io.Writer, nodes []*structs.NodeListStub) {
	tw := newTabs(w)
	fmt.Fprintln(tw, "ID\tNode Pool\tDC\tName\tClass\tDrain\tEligibility\tStatus")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%s\t%s\n", idShort(n.ID), n.NodePool, n.Datacenter, n.Name,
			orNone(n.NodeClass), n.Drain, n.SchedulingEligibility, n.Status)
	}
	tw.Flush()
}

// printJobStubs prints Nomad's jobs table.
func printJobStubs(w io.Writer, jobs []*structs.JobListStub) {
	tw := newTabs(w)
	fmt.Fprintln(tw, "ID\tType\tPriority\tStatus\tSubmit Date")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", j.ID, j.Type, j.Priority, j.Status, fmtUnixNano(j.SubmitTime))
	}
	tw.Flush()
}

// joinOr joins ss with ", ", or returns "<none>".
func joinOr(ss []string) string { return orNone(strings.Join(ss, ", ")) }
