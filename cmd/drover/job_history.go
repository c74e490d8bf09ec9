package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/jobdiff"
	"github.com/droverhq/drover/structs"
)

func init() { registerJobCommand("history", newJobHistoryCommand) }

func newJobHistoryCommand() *cobra.Command {
	var f opFlags
	var diffs, full bool
	var version, against int64
	cmd := &cobra.Command{
		Use:   "history [flags] JOB",
		Short: "List a job's stored versions, newest first",
		Long: `Lists the versions drover keeps of a job (the latest six and the latest
stable one): version, stability and submit date. -p adds, for each version,
what changed from the one before it, field by field (as job plan shows it),
with what each change forces.`,
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
			versions, diffList, err := c.Jobs().VersionsWithDiffs(cmd.Context(), jobID, against)
			if err != nil {
				return fmt.Errorf("retrieving job versions: %w", err)
			}
			// The server's diffs pair each version with the one before it,
			// in its newest-first order.
			diffOf := map[uint64]*jobdiff.JobDiff{}
			for i, d := range diffList {
				if i < len(versions) {
					diffOf[versions[i].Version] = d
				}
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
			if ok, err := f.formatted(cmd, versions); ok {
				return err
			}
			for i, v := range versions {
				if i > 0 {
					fmt.Fprintln(w)
				}
				printJobVersion(w, v)
				if full {
					// Nomad's -full: the whole job of the version.
					b, err := json.MarshalIndent(v, "", "    ")
					if err != nil {
						return err
					}
					fmt.Fprintf(w, "Full\t= %s\n", b)
				}
				switch {
				case against >= 0:
					fmt.Fprintf(w, "Diff from version %d:\n", against)
					printDiff(w, diffOf[v.Version])
				case diffs:
					if prev := previousVersion(all, v.Version); prev != nil {
						fmt.Fprintf(w, "Diff from version %d:\n", prev.Version)
						printDiff(w, diffOf[v.Version])
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&diffs, "p", "p", false, "show what changed from the previous version")
	cmd.Flags().BoolVar(&full, "full", false, "show each version's whole job (JSON)")
	cmd.Flags().Int64Var(&version, "version", -1, "show only this version")
	cmd.Flags().Int64Var(&against, "diff-version", -1, "show what changed from this version (instead of from the previous one)")
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

// printDiff prints a version's diff, field by field, as job plan prints
// one.
func printDiff(w io.Writer, d *jobdiff.JobDiff) {
	if d == nil || d.Type == jobdiff.TypeNone {
		fmt.Fprintln(w, "  (no changes)")
		return
	}
	fmt.Fprint(w, jobdiff.Format(d, false))
}
