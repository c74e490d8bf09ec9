package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/jobspec"
	leadersvc "github.com/droverhq/drover/server"
	"github.com/droverhq/drover/structs"
	"github.com/droverhq/drover/ui"
)

// The deployment page shows what the server says a rollout waits on
// (WaitReason) and its analysis runs. The runs' producer (the leader's
// measurements) is tested with a real Prometheus elsewhere; here the
// deployment, its runs and its wait reason are written into a real state
// machine through its log entries, and served by the real HTTP API and UI
// to a real browser.

// newMemUI serves the API and the UI over an in-memory log and a real
// leader (not running: nothing is scheduled), as an agent's mux does.
func newMemUI(t *testing.T) (*memBackend, *leadersvc.Leader, string) {
	t.Helper()
	log := &memLog{fsm: fsm.New(nil)}
	l, err := leadersvc.New(leadersvc.Config{Raft: log, State: log.fsm.State, Logger: hclog.NewNullLogger(), NumWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := &memBackend{memLog: log, ClientBackend: l, OperatorBackend: l, addr: "127.0.0.1:4647"}
	mux := http.NewServeMux()
	mux.Handle("/", httpapi.New(b, nil).Handler())
	mux.Handle(ui.Prefix, ui.New())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return b, l, srv.URL
}

func (b *memBackend) must(t *testing.T, typ fsm.MessageType, req any) {
	t.Helper()
	if _, _, err := b.Apply(context.Background(), typ, req); err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
}

func ptrF(v float64) *float64 { return &v }

// TestUIWaitReasonAndAnalysis: the deployment page shows the watcher's
// sentence for a held group, as written through the log, instead of
// working one out, and follows it when it changes; it lists the group's
// analysis runs with their values against the job's condition and plots
// each run's measurements; the job page's bar shows old serving, in flight
// and unhealthy from the deployment, not zeros.
func TestUIWaitReasonAndAnalysis(t *testing.T) {
	chromiumPath(t)
	b, leader, base := newMemUI(t)
	ctx := context.Background()
	job, _, err := jobspec.Parse("web.hcl", []byte(`job "web" {
  group "web" {
    count = 4
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
`), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leader.RegisterJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	v2 := job.Copy()
	v2.Meta = map[string]string{"v": "2"}
	v2.TaskGroups[0].Update.MaxParallel = 2
	v2.TaskGroups[0].Update.Analyses = []*structs.Analysis{{Name: "errors", Provider: structs.AnalysisProviderPrometheus,
		Query: "sum(rate(errors[1m]))", Success: "result < 0.01", Failure: "result >= 0.05",
		When: structs.AnalysisWhenEachBatch, Interval: 10 * time.Second, Count: 3}}
	if _, err := leader.RegisterJob(ctx, v2); err != nil {
		t.Fatal(err)
	}
	stored, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	if stored.Version != 1 {
		t.Fatalf("job version %d, want 1", stored.Version)
	}

	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	const yes, no = true, false
	alloc := func(id string, idx int, version uint64, dep string, healthy *bool, status string) *structs.Allocation {
		a := &structs.Allocation{ID: id, Namespace: structs.DefaultNamespace, Name: structs.AllocName("web", "web", idx),
			NodeID: "n1", JobID: "web", TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: status,
			DeploymentID: dep, CreateTime: at.UnixNano(), ModifyTime: at.UnixNano()}
		if dep != "" {
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: healthy, Timestamp: at}
		}
		j := stored
		if version == 0 {
			j, _ = b.State().Snapshot().JobByIDAndVersion(structs.DefaultNamespace, "web", 0)
		}
		a.Job = j
		return a
	}
	const depID = "5e1f0000-0000-4000-8000-000000000001"
	b.must(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: "e-old", Job: stored,
		AllocsPlaced: []*structs.Allocation{alloc("old-0", 0, 0, "", nil, structs.AllocClientStatusRunning)},
		UpdatedAt:    at.UnixNano(),
	})
	b.must(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: "e-new", Job: stored,
		Deployment: &structs.Deployment{ID: depID, Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: 1,
			JobCreateIndex: stored.CreateIndex, Status: structs.DeploymentStatusRunning,
			StatusDescription: structs.DeploymentStatusDescriptionRunning,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 4, ProgressDeadline: 10 * time.Minute,
				Analyses: []*structs.AnalysisRun{{Name: "errors", When: structs.AnalysisWhenEachBatch, Batch: 1,
					Phase: structs.AnalysisPhaseRunning, StartedAt: at, Successes: 2, Failures: 1,
					Measurements: []*structs.AnalysisMeasurement{
						{At: at, Result: ptrF(0.004), Results: []float64{0.004}, Outcome: structs.AnalysisOutcomeSuccess},
						{At: at.Add(10 * time.Second), Result: ptrF(0.07), Results: []float64{0.07}, Outcome: structs.AnalysisOutcomeFailure},
						{At: at.Add(20 * time.Second), Result: ptrF(0.003), Results: []float64{0.003}, Outcome: structs.AnalysisOutcomeSuccess},
					}}}}}},
		AllocsPlaced: []*structs.Allocation{
			alloc("new-1", 1, 1, depID, nil, structs.AllocClientStatusPending),
			alloc("new-2", 2, 1, depID, nil, structs.AllocClientStatusPending),
			alloc("new-3", 3, 1, depID, nil, structs.AllocClientStatusPending),
		},
		UpdatedAt: at.UnixNano(),
	})
	// The client's verdicts: new-1 healthy, new-3 failed; new-2 in flight.
	verdict := func(id, status string, healthy bool) *structs.Allocation {
		a := alloc(id, 0, 1, depID, &healthy, status)
		a.Job = nil
		return a
	}
	b.must(t, fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{verdict("new-1", structs.AllocClientStatusRunning, yes),
			verdict("new-3", structs.AllocClientStatusFailed, no)},
		UpdatedAt: at.Add(5 * time.Second).UnixNano(),
	})
	// The watcher's sentence, as its status update writes it.
	reason := func(r string) {
		d, _ := b.State().Snapshot().DeploymentByID(depID)
		b.must(t, fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: depID, Status: d.Status,
				StatusDescription: d.StatusDescription, WaitReasons: map[string]string{"web": r}},
			UpdatedAt: time.Now().UnixNano(),
		})
	}
	first := `analysis "errors" runs after batch 1: 3 of 3 measurements to go`
	reason(first)

	br := newBrowser(t, base, 2*time.Minute)
	br.open("/ui/deployments/" + depID)
	br.waitText(`[data-group="web"] [data-k="waits"]`, first, 20*time.Second)
	br.waitText("#dep-waiting", first, 5*time.Second)
	js[bool](br, "window.sameDocument = true")

	// The runs: name, phase, the last values against the condition.
	run := `[data-group="web"] tr[data-run="errors/1"] `
	br.waitText(run+`[data-k="values"]`, "0.004, 0.07, 0.003", 10*time.Second)
	if got := br.text(run + `[data-k="condition"]`); got != "success: result < 0.01; failure: result >= 0.05" {
		t.Errorf("the run's condition shows %q", got)
	}
	if got := br.text(run + `[data-k="phase"]`); got != "running" {
		t.Errorf("the run's phase shows %q", got)
	}
	// The plot of its measurements, one point per measurement coloured by
	// its outcome.
	br.waitText(`#dep-analyses [data-run="errors/1"] svg title`, "analysis errors of group web after batch 1: running, 3 measurements", 10*time.Second)
	if n := js[int](br, `document.querySelectorAll('#dep-analyses [data-run="errors/1"] circle.m-success').length`); n != 2 {
		t.Errorf("%d success points plotted, want 2", n)
	}
	if n := js[int](br, `document.querySelectorAll('#dep-analyses [data-run="errors/1"] circle.m-failure').length`); n != 1 {
		t.Errorf("%d failure points plotted, want 1", n)
	}

	// A new sentence from the server replaces the old one live.
	second := `zone "b" waits: 1 of 1 allowed unavailable in use`
	reason(second)
	br.waitText(`[data-group="web"] [data-k="waits"]`, second, 20*time.Second)
	if strings.Contains(br.text("#dep-waiting"), first) {
		t.Errorf("the old sentence stays: %q", br.text("#dep-waiting"))
	}
	if strings.Contains(br.pageText(), "Placing the next batch") {
		t.Error("the page works out a sentence of its own")
	}
	if !js[bool](br, "window.sameDocument === true") {
		t.Error("the deployment page reloaded itself")
	}

	// The job page's bar: old serving, new healthy, in flight and
	// unhealthy, from the deployment's figures and the job's allocations.
	br.open("/ui/jobs/web")
	bar := `#job-deployment tr[data-group="web"] svg.bar title`
	br.waitText(bar, "1 old serving, 1 new healthy, 1 in flight, 1 unhealthy, of 4", 20*time.Second)
	br.waitText(`#job-deployment tr[data-group="web"] [data-k="waits"]`, second, 5*time.Second)
}
