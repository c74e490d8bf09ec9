package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/droverhq/drover/structs"
)

// rolloutWidths describes, for `job plan`, how a group's rollout policies
// resolve against its count: the batch width, surge, first batch,
// checkpoints and failure thresholds in allocs. Empty when the group does
// not roll, or writes none of drover's own policies and no percent width.
func rolloutWidths(tg *structs.TaskGroup, jobType string) string {
	u := tg.Update
	if u == nil || !u.Rolling() || jobType == structs.JobTypeBatch {
		return ""
	}
	if u.MaxParallelPercent == nil && u.MaxSurge == nil && u.FirstBatch == nil && !u.UnhealthyFirst &&
		u.MaxUnhealthy == nil && u.MaxFailed == nil && u.OnFailure != structs.OnFailurePause && len(u.Checkpoints) == 0 &&
		u.Zones == nil {
		return ""
	}
	count := tg.Count
	var parts []string
	add := func(format string, a ...any) { parts = append(parts, fmt.Sprintf(format, a...)) }
	written := func(a *structs.Amount) string {
		if a != nil && a.Percent {
			return " (" + a.String() + ")"
		}
		return ""
	}
	mp := fmt.Sprintf("max_parallel %d", u.ParallelFor(count))
	if u.MaxParallelPercent != nil {
		mp += fmt.Sprintf(" (%d%%)", *u.MaxParallelPercent)
	}
	parts = append(parts, mp)
	if u.MaxSurge != nil {
		add("max_surge %d%s", u.SurgeFor(count), written(u.MaxSurge))
	}
	if u.FirstBatch != nil {
		add("first_batch %d%s", u.FirstBatchFor(count), written(u.FirstBatch))
	}
	if u.UnhealthyFirst {
		parts = append(parts, "unhealthy_first")
	}
	if n, ok := u.MaxUnhealthyFor(count); ok {
		add("max_unhealthy %d%s", n, written(u.MaxUnhealthy))
	}
	if n, ok := u.MaxFailedFor(count); ok {
		add("max_failed %d%s", n, written(u.MaxFailed))
	}
	if cps := u.CheckpointsFor(count); len(cps) > 0 {
		s := make([]string, len(cps))
		for i, c := range cps {
			s[i] = fmt.Sprint(c) + written(&u.Checkpoints[i])
		}
		cp := "checkpoints at " + strings.Join(s, ", ") + " healthy"
		if u.CheckpointDelay > 0 {
			cp += fmt.Sprintf(", resumed after %s", u.CheckpointDelay)
		}
		parts = append(parts, cp)
	}
	add("on_failure %s", u.FailureAction())
	return fmt.Sprintf("Rollout of %q (count %d): %s", tg.Name, count, strings.Join(parts, ", "))
}

// printRolloutPlan prints the batches the rollout will run if nothing
// fails, when there are more than one (a single batch is the whole job).
func printRolloutPlan(w io.Writer, jobID string, plan []structs.RolloutBatch) {
	if len(plan) < 2 {
		return
	}
	fmt.Fprintln(w, "\nRollout plan, if nothing fails:")
	analysis := false
	for _, b := range plan {
		analysis = analysis || len(b.Analysis) > 0
	}
	tw := newTabs(w)
	header := "Group\tBatch\tZone\tAllocs\tSurge\tPause After"
	if analysis {
		header += "\tAnalysis"
	}
	fmt.Fprintln(tw, header)
	for _, b := range plan {
		zone := b.Zone
		if zone == "" {
			zone = "-"
		}
		pause := b.PauseAfter
		if pause == "" {
			pause = "-"
		}
		row := fmt.Sprintf("%s\t%d\t%s\t%s\t%t\t%s", b.Group, b.Batch, zone, allocList(jobID, b.Allocs), b.Surge, pause)
		if analysis {
			gate := strings.Join(b.Analysis, ", ")
			if gate == "" {
				gate = "-"
			}
			row += "\t" + gate
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}

// allocList shortens alloc names to their group[index] and lists at most
// six of them.
func allocList(jobID string, names []string) string {
	short := make([]string, 0, min(len(names), 7))
	for i, n := range names {
		if i == 6 {
			short = append(short, fmt.Sprintf("… (%d in all)", len(names)))
			break
		}
		short = append(short, strings.TrimPrefix(n, jobID+"."))
	}
	return strings.Join(short, ", ")
}
