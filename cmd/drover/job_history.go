package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() { registerJobCommand("history", newJobHistoryCommand) }

func newJobHistoryCommand() *cobra.Command {
	var f opFlags
	var diffs bool
	var version int64
	cmd := &cobra.Command{
		Use:   "history [flags] JOB",
		Short: "List a job's stored versions, newest first",
		Long: `Lists the versions drover keeps of a job (the latest six and the latest
stable one): version, stability and submit date. -p adds, for each version,
what changed from the one before it, down to task groups and tasks.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			jobID, err := resolveJobID(cmd.Context(), c, w, args[0])
			if err != nil {
				return err
			}
			versions, _, err := c.Jobs().Versions(cmd.Context(), jobID, nil)
			if err != nil {
				return fmt.Errorf("retrieving job versions: %w", err)
			}
			sort.Slice(versions, func(a, b int) bool { return versions[a].Version > versions[b].Version })
			all := versions
			if version >= 0 {
				var one []*structs.Job
				for _, v := range versions {
					if v.Version == uint64(version) {
						one = append(one, v)
					}
				}
				if len(one) == 0 {
					return &exitError{code: 1, msg: fmt.Sprintf("Job %q has no version %d", jobID, version)}
				}
				versions = one
			}
			if f.json {
				return writeJSON(cmd, versions)
			}
			for i, v := range versions {
				if i > 0 {
					fmt.Fprintln(w)
				}
				printJobVersion(w, v)
				if diffs {
					if prev := previousVersion(all, v.Version); prev != nil {
						printVersionDiff(w, prev, v)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&diffs, "p", "p", false, "show what changed from the previous version")
	cmd.Flags().Int64Var(&version, "version", -1, "show only this version")
	f.addAddress(cmd)
	f.addJSON(cmd)
	return cmd
}

func printJobVersion(w io.Writer, v *structs.Job) {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "Version\t= %d\n", v.Version)
	fmt.Fprintf(tw, "Stable\t= %t\n", v.Stable)
	if v.SubmitTime != 0 {
		fmt.Fprintf(tw, "Submit Date\t= %s\n", time.Unix(0, v.SubmitTime).Local().Format(time.RFC3339))
	}
	_ = tw.Flush()
}

// previousVersion returns the newest version older than version, or nil.
func previousVersion(all []*structs.Job, version uint64) *structs.Job {
	var prev *structs.Job
	for _, v := range all {
		if v.Version < version && (prev == nil || v.Version > prev.Version) {
			prev = v
		}
	}
	return prev
}

// printVersionDiff prints what changed between two versions, down to
// groups and tasks ("+" added, "-" removed, "+/-" edited).
func printVersionDiff(w io.Writer, prev, cur *structs.Job) {
	fmt.Fprintf(w, "Diff from version %d:\n", prev.Version)
	if !cur.SpecChanged(prev) {
		fmt.Fprintln(w, "  (no changes)")
		return
	}
	fmt.Fprintf(w, "+/- Job: %q\n", cur.ID)
	names := map[string]bool{}
	for _, g := range prev.TaskGroups {
		names[g.Name] = true
	}
	for _, g := range cur.TaskGroups {
		names[g.Name] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		a, b := prev.LookupTaskGroup(n), cur.LookupTaskGroup(n)
		switch {
		case a == nil:
			fmt.Fprintf(w, "+   Task Group: %q\n", n)
		case b == nil:
			fmt.Fprintf(w, "-   Task Group: %q\n", n)
		case !sameJSON(a, b):
			fmt.Fprintf(w, "+/- Task Group: %q\n", n)
			if a.Count != b.Count {
				fmt.Fprintf(w, "  +/- Count: %d => %d\n", a.Count, b.Count)
			}
			printTaskDiffs(w, a, b)
		}
	}
}

func printTaskDiffs(w io.Writer, a, b *structs.TaskGroup) {
	tasks := map[string][2]*structs.Task{}
	for _, t := range a.Tasks {
		p := tasks[t.Name]
		p[0] = t
		tasks[t.Name] = p
	}
	for _, t := range b.Tasks {
		p := tasks[t.Name]
		p[1] = t
		tasks[t.Name] = p
	}
	names := make([]string, 0, len(tasks))
	for n := range tasks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := tasks[n]
		switch {
		case p[0] == nil:
			fmt.Fprintf(w, "  +   Task: %q\n", n)
		case p[1] == nil:
			fmt.Fprintf(w, "  -   Task: %q\n", n)
		case !sameJSON(p[0], p[1]):
			fmt.Fprintf(w, "  +/- Task: %q\n", n)
		}
	}
}

func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}
