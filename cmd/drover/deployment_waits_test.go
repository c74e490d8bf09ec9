package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

func f64(v float64) *float64 { return &v }

// analysedDeployment is a running deployment whose group web waits on a
// zone's budget and holds two analysis runs: one successful, one running
// whose last measurement was an error.
func analysedDeployment(id string, job *structs.Job) *structs.Deployment {
	at := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	return &structs.Deployment{
		ID: id, Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: job.Version,
		JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusRunning,
		StatusDescription: structs.DeploymentStatusDescriptionRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {
			DesiredTotal: 4,
			WaitReason:   `zone "b" waits: 1 of 1 allowed unavailable in use`,
			Analyses: []*structs.AnalysisRun{
				{Name: "errors", When: structs.AnalysisWhenEachBatch, Batch: 1, Zone: "a", Phase: structs.AnalysisPhaseSuccessful,
					StartedAt: at, Successes: 2, Measurements: []*structs.AnalysisMeasurement{
						{At: at, Result: f64(0.001), Results: []float64{0.001}, Outcome: structs.AnalysisOutcomeSuccess},
						{At: at.Add(10 * time.Second), Result: f64(0.002), Results: []float64{0.002}, Outcome: structs.AnalysisOutcomeSuccess},
					}},
				{Name: "latency", When: structs.AnalysisWhenBackground, Phase: structs.AnalysisPhaseRunning,
					StartedAt: at, Successes: 1, Errors: 1, Measurements: []*structs.AnalysisMeasurement{
						{At: at, Result: f64(0.2), Results: []float64{0.2, 0.3}, Outcome: structs.AnalysisOutcomeSuccess},
						{At: at.Add(10 * time.Second), Outcome: structs.AnalysisOutcomeError, Error: "Post \"http://127.0.0.1:9090/api/v1/query\": connection refused"},
					}},
			},
		}},
	}
}

// deployment status shows the watcher's sentence and the runs with their
// last values against the job's conditions, read from the deployment the
// store keeps; the live view shows them too.
func TestDeploymentStatusWaitsAndAnalysesThroughAPI(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	job, _, err := jobspec.Parse("web.hcl", []byte(cliJobHCL), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	job.TaskGroups[0].Update.Analyses = []*structs.Analysis{
		{Name: "errors", Provider: structs.AnalysisProviderPrometheus, Query: "sum(rate(errors[1m]))",
			Success: "result < 0.01", Failure: "result >= 0.05", When: structs.AnalysisWhenEachBatch, Interval: 10 * time.Second, Count: 2},
		{Name: "latency", Provider: structs.AnalysisProviderPrometheus, Query: "max(latency)",
			Success: "max(results...) < 0.5", When: structs.AnalysisWhenBackground, Interval: 10 * time.Second},
	}
	if _, err := b.leader.RegisterJob(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	stored, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	b.must(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: "e", Job: stored, Deployment: analysedDeployment(depA, stored),
		UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
	})
	out := wantCLI(t, 0, nil, "deployment", "status", "-address", addr, "0b23")
	for _, want := range []string{
		"\nWaiting\nTask Group  Waits On\nweb         zone \"b\" waits: 1 of 1 allowed unavailable in use\n",
		"\nAnalyses of group web\n",
		"Name     When        Batch  Zone  Phase       Started               Success  Failure  Inconclusive  Errors  Last Values        Condition\n",
		"errors   each_batch  1      a     successful  2026-01-02T03:04:00Z  2        0        0             0       0.001, 0.002       success: result < 0.01; failure: result >= 0.05\n",
		"latency  background  -      -     running     2026-01-02T03:04:00Z  1        0        0             1       [0.2, 0.3], error  success: max(results...) < 0.5\n",
		"  latency: last error: Post \"http://127.0.0.1:9090/api/v1/query\": connection refused\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("deployment status lacks %q:\n%s", want, out)
		}
	}

	// The live view of job run and deployment status -monitor.
	live := renderDeployment(analysedDeployment(depA, stored))
	for _, want := range []string{"    Waiting\n", "    web         zone \"b\" waits: 1 of 1 allowed unavailable in use\n",
		"    Analyses of group web\n"} {
		if !strings.Contains(live, want) {
			t.Fatalf("live view lacks %q:\n%s", want, live)
		}
	}
}

// A deployment that has ended, or whose groups nothing holds, shows no
// Waiting table.
func TestDeploymentStatusNoWaits(t *testing.T) {
	d := analysedDeployment(depA, &structs.Job{})
	d.Status = structs.DeploymentStatusSuccessful
	var b bytes.Buffer
	(&opFlags{}).printDeploymentStatus(&b, d)
	if strings.Contains(b.String(), "Waiting") {
		t.Fatalf("ended deployment shows a wait:\n%s", b.String())
	}
	d.Status = structs.DeploymentStatusRunning
	d.TaskGroups["web"].WaitReason = ""
	b.Reset()
	(&opFlags{}).printDeploymentStatus(&b, d)
	if strings.Contains(b.String(), "Waiting") {
		t.Fatalf("no wait shown as one:\n%s", b.String())
	}
}
