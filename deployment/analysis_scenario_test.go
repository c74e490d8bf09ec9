package deployment

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/droverhq/drover/structs"
)

// Scenario commands for analysis runs (testdata/decide/e*.txt):
//
//	analysis group=web name=errors when=each_batch [count=3] [interval=10s]
//	  [initial-delay=0s] [failure-limit=0] [inconclusive-limit=0]
//	  [error-limit=4] [success=<expr>] [failure=<expr>]
//	measure group=web name=errors now=OFFSET outcome=success|failure|inconclusive|error
//	  [result=0.07] [error=<message>]
//	promote now=OFFSET [groups=web]
//
// measure takes the latest run of the analysis, applies the measurement as
// the leader does (structs.ApplyMeasurement) and writes it as the store
// does, and prints the run.
func (sc *scenario) runAnalysis(t *testing.T, td *datadriven.TestData) (string, bool, error) {
	switch td.Cmd {
	case "analysis":
		return "", true, sc.addAnalysis(t, td)
	case "measure":
		out, err := sc.measure(t, td)
		return out, true, err
	case "promote":
		now, err := offsetArg(t, td, "now")
		if err != nil {
			return "", true, err
		}
		var groups []string
		if td.HasArg("groups") {
			var v string
			td.ScanArgs(t, "groups", &v)
			groups = strings.Split(v, ",")
		}
		d, err := Promote(sc.obs.Deployment, groups, sc.obs.Allocs, now)
		if err != nil {
			return "", true, err
		}
		skipped := PromotedAnalyses(sc.obs.Deployment, groups)
		structs.ApplyAnalysisRequest(d, &structs.DeploymentAnalysisRequest{Updates: skipped})
		sc.obs.Deployment = d
		return sc.show(), true, nil
	}
	return "", false, nil
}

func (sc *scenario) addAnalysis(t *testing.T, td *datadriven.TestData) error {
	var group string
	td.ScanArgs(t, "group", &group)
	var tg *structs.TaskGroup
	for _, g := range sc.obs.Job.TaskGroups {
		if g.Name == group {
			tg = g
		}
	}
	if tg == nil {
		return fmt.Errorf("no group %q", group)
	}
	a := &structs.Analysis{Provider: structs.AnalysisProviderPrometheus, Query: "q",
		Interval: structs.DefaultAnalysisInterval, Count: structs.DefaultAnalysisCount, ErrorLimit: structs.DefaultAnalysisErrorLimit,
		Success: "result < 0.01", Failure: "result >= 0.05"}
	td.ScanArgs(t, "name", &a.Name)
	td.ScanArgs(t, "when", &a.When)
	td.MaybeScanArgs(t, "count", &a.Count)
	td.MaybeScanArgs(t, "failure-limit", &a.FailureLimit)
	td.MaybeScanArgs(t, "inconclusive-limit", &a.InconclusiveLimit)
	td.MaybeScanArgs(t, "error-limit", &a.ErrorLimit)
	td.MaybeScanArgs(t, "success", &a.Success)
	td.MaybeScanArgs(t, "failure", &a.Failure)
	for key, dst := range map[string]*time.Duration{"interval": &a.Interval, "initial-delay": &a.InitialDelay} {
		if td.HasArg(key) {
			var v string
			td.ScanArgs(t, key, &v)
			d, err := time.ParseDuration(v)
			if err != nil {
				return err
			}
			*dst = d
		}
	}
	tg.Update.Analyses = append(tg.Update.Analyses, a)
	return nil
}

func (sc *scenario) measure(t *testing.T, td *datadriven.TestData) (string, error) {
	var group, name, outcome string
	td.ScanArgs(t, "group", &group)
	td.ScanArgs(t, "name", &name)
	td.ScanArgs(t, "outcome", &outcome)
	now, err := offsetArg(t, td, "now")
	if err != nil {
		return "", err
	}
	s := sc.obs.Deployment.TaskGroups[group]
	if s == nil {
		return "", fmt.Errorf("no group %q", group)
	}
	idx := -1
	for i, r := range s.Analyses {
		if r.Name == name {
			idx = i
		}
	}
	if idx < 0 {
		return "", fmt.Errorf("no run of %q", name)
	}
	var a *structs.Analysis
	if tg := sc.obs.Job.LookupTaskGroup(group); tg != nil {
		a = specOf(tg.Update.Analyses, name)
	}
	m := &structs.AnalysisMeasurement{At: now, Outcome: outcome}
	if td.HasArg("result") {
		var v string
		td.ScanArgs(t, "result", &v)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", err
		}
		m.Result, m.Results = &f, []float64{f}
	}
	td.MaybeScanArgs(t, "error", &m.Error)
	prev := s.Analyses[idx]
	run := structs.ApplyMeasurement(prev, a, m)
	d := sc.obs.Deployment.Copy()
	structs.ApplyAnalysisRequest(d, &structs.DeploymentAnalysisRequest{Updates: []*structs.AnalysisRunUpdate{
		{Group: group, Index: idx, Run: run, PrevPhase: prev.Phase, PrevAt: prev.LastAt()}}})
	sc.obs.Deployment = d
	return formatRun(d.TaskGroups[group].Analyses[idx], idx) + "\n", nil
}

// formatRun prints a run, times relative to t0.
func formatRun(r *structs.AnalysisRun, i int) string {
	s := fmt.Sprintf("run %s#%d %s %s", r.Name, i, r.When, r.Phase)
	if r.Batch > 0 {
		s += fmt.Sprintf(" batch=%d", r.Batch)
	}
	if r.Zone != "" {
		s += " zone=" + r.Zone
	}
	if r.Healthy > 0 {
		s += fmt.Sprintf(" healthy=%d", r.Healthy)
	}
	s += fmt.Sprintf(" started=+%s s/f/i/e=%d/%d/%d/%d", r.StartedAt.Sub(t0), r.Successes, r.Failures, r.Inconclusives, r.Errors)
	if at := r.LastAt(); !at.IsZero() {
		s += fmt.Sprintf(" last=+%s", at.Sub(t0))
	}
	return s
}

// showRuns prints a group's runs and its wait reason.
func showRuns(b *strings.Builder, s *structs.DeploymentState) {
	for i, r := range s.Analyses {
		fmt.Fprintf(b, "  %s\n", formatRun(r, i))
	}
	if s.WaitReason != "" {
		fmt.Fprintf(b, "  wait-reason: %s\n", s.WaitReason)
	}
}

// formatMeasureRel renders due measurements relative to t0.
func formatMeasureRel(ms []MeasureDue) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s/%s#%d at +%s", m.Group, m.Run.Name, m.Index, m.At.Sub(t0))
	}
	return strings.Join(parts, "; ")
}
