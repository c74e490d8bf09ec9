package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// What a deployment waits on and its analysis runs, as deployment status
// and the monitors of job run and deployment status -monitor show them:
// the watcher's own sentence per group (DeploymentState.WaitReason), never
// worked out again here, and each group's runs with their last values
// against the condition of the job's analysis block.

// printWaits prints, for an active deployment, each group's WaitReason:
//
//	Waiting
//	Task Group  Waits On
//	web         zone "b" waits: 1 of 1 allowed unavailable in use
//
// Nothing when no group is held.
func printWaits(w io.Writer, d *structs.Deployment) {
	if !d.Active() {
		return
	}
	names, _ := deploymentGroupNames(d)
	var rows []string
	for _, n := range names {
		if s := d.TaskGroups[n]; s != nil && s.WaitReason != "" {
			rows = append(rows, n+"\t"+s.WaitReason)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWaiting\n")
	tw := newTabs(w)
	fmt.Fprintln(tw, "Task Group\tWaits On")
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	_ = tw.Flush()
}

// analysisConditions returns the analysis blocks of the deployment's job
// version, per group and name, for the conditions printAnalyses shows;
// nil when the version cannot be read (the runs are shown without them).
func analysisConditions(ctx context.Context, c *apiclient.Client, d *structs.Deployment) map[string]map[string]*structs.Analysis {
	if !hasAnalyses(d) {
		return nil
	}
	versions, _, err := c.Jobs().Versions(ctx, d.JobID, &apiclient.QueryOptions{Namespace: d.Namespace})
	if err != nil {
		return nil
	}
	for _, j := range versions {
		if j == nil || j.Version != d.JobVersion {
			continue
		}
		out := map[string]map[string]*structs.Analysis{}
		for _, tg := range j.TaskGroups {
			if tg == nil || tg.Update == nil {
				continue
			}
			for _, a := range tg.Update.Analyses {
				if a == nil {
					continue
				}
				if out[tg.Name] == nil {
					out[tg.Name] = map[string]*structs.Analysis{}
				}
				out[tg.Name][a.Name] = a
			}
		}
		return out
	}
	return nil
}

// hasAnalyses reports whether a group of the deployment has runs.
func hasAnalyses(d *structs.Deployment) bool {
	for _, s := range d.TaskGroups {
		if s != nil && len(s.Analyses) > 0 {
			return true
		}
	}
	return false
}

// analysisValuesShown is how many of a run's last measurements the table
// shows.
const analysisValuesShown = 5

// printAnalyses prints each group's analysis runs, in the order they
// started:
//
//	Analyses of group web
//	Name    When        Batch  Zone  Phase       Started               Success  Failure  Inconclusive  Errors  Last Values          Condition
//	errors  each_batch  1      -     successful  2026-01-01T00:01:00Z  3        0        0             0       0.001, 0.002, 0.001  success: result < 0.01
//
// Last Values are the last measurements' results, oldest first ("error"
// for a measurement that gave none); Condition the analysis block's
// success and failure expressions (conds; "-" when unknown).
func printAnalyses(w io.Writer, d *structs.Deployment, conds map[string]map[string]*structs.Analysis) {
	names, _ := deploymentGroupNames(d)
	for _, g := range names {
		s := d.TaskGroups[g]
		if s == nil || len(s.Analyses) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nAnalyses of group %s\n", g)
		tw := newTabs(w)
		fmt.Fprintln(tw, "Name\tWhen\tBatch\tZone\tPhase\tStarted\tSuccess\tFailure\tInconclusive\tErrors\tLast Values\tCondition")
		for _, r := range s.Analyses {
			if r == nil {
				continue
			}
			batch := "-"
			if r.Batch > 0 {
				batch = strconv.Itoa(r.Batch)
			}
			zone := "-"
			if r.Zone != "" {
				zone = r.Zone
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", r.Name, r.When, batch, zone, r.Phase,
				fmtTime(r.StartedAt), r.Successes, r.Failures, r.Inconclusives, r.Errors,
				lastValues(r.Measurements, analysisValuesShown), condition(conds[g][r.Name]))
		}
		_ = tw.Flush()
		for _, r := range s.Analyses {
			if m := lastError(r); m != "" {
				fmt.Fprintf(w, "  %s: last error: %s\n", r.Name, m)
			}
		}
	}
}

// lastValues renders the results of the last n measurements, oldest
// first; "-" when there is none.
func lastValues(ms []*structs.AnalysisMeasurement, n int) string {
	if len(ms) > n {
		ms = ms[len(ms)-n:]
	}
	var parts []string
	for _, m := range ms {
		if m == nil {
			continue
		}
		parts = append(parts, measurementValue(m))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// measurementValue is one measurement's result as the condition saw it:
// result, or every sample's value when there are several ("[1, 2]");
// "error" when it gave none.
func measurementValue(m *structs.AnalysisMeasurement) string {
	switch {
	case len(m.Results) > 1:
		vs := make([]string, len(m.Results))
		for i, v := range m.Results {
			vs[i] = strconv.FormatFloat(v, 'g', 6, 64)
		}
		return "[" + strings.Join(vs, ", ") + "]"
	case m.Result != nil:
		return strconv.FormatFloat(*m.Result, 'g', 6, 64)
	case m.Outcome != "":
		return m.Outcome
	}
	return "-"
}

// condition renders an analysis block's conditions; "-" when unknown.
func condition(a *structs.Analysis) string {
	if a == nil {
		return "-"
	}
	var parts []string
	if a.Success != "" {
		parts = append(parts, "success: "+a.Success)
	}
	if a.Failure != "" {
		parts = append(parts, "failure: "+a.Failure)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

// lastError is the error of a run's last measurement, if it was one.
func lastError(r *structs.AnalysisRun) string {
	if r == nil || len(r.Measurements) == 0 {
		return ""
	}
	m := r.Measurements[len(r.Measurements)-1]
	if m == nil || m.Outcome != structs.AnalysisOutcomeError {
		return ""
	}
	return m.Error
}
