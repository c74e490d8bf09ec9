package fsm

import (
	"bytes"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// analysisLog is a deployment with a run started and two measurements,
// the second of them also written again as a former leader would (it is
// dropped), and a run of a deployment that ended (dropped too).
func analysisLog(t *testing.T) [][]byte {
	job := statetest.Job("web", 2)
	var entries [][]byte
	add := func(mt MessageType, req any) { entries = append(entries, entry(t, mt, req)) }
	add(JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	add(ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e0", Job: job,
		Deployment: &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobCreateIndex: 1,
			Status: structs.DeploymentStatusRunning, TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2}}},
		UpdatedAt: 2})
	t0 := time.Unix(1000, 0).UTC()
	run := &structs.AnalysisRun{Name: "errors", When: structs.AnalysisWhenEachBatch, Batch: 1, Healthy: 1,
		Phase: structs.AnalysisPhaseRunning, StartedAt: t0}
	add(AnalysisRunRequestType, &structs.DeploymentAnalysisRequest{DeploymentID: "d1",
		Updates:     []*structs.AnalysisRunUpdate{{Group: "web", Index: 0, Run: run}},
		WaitReasons: map[string]string{"web": "held"}, UpdatedAt: t0.UnixNano()})
	a := &structs.Analysis{Name: "errors", When: structs.AnalysisWhenEachBatch, Count: 2, ErrorLimit: 4}
	v := 0.001
	m1 := structs.ApplyMeasurement(run, a, &structs.AnalysisMeasurement{At: t0.Add(time.Second), Result: &v, Results: []float64{v}, Outcome: structs.AnalysisOutcomeSuccess})
	add(AnalysisMeasurementRequestType, &structs.DeploymentAnalysisRequest{DeploymentID: "d1",
		Updates: []*structs.AnalysisRunUpdate{{Group: "web", Index: 0, Run: m1, PrevPhase: structs.AnalysisPhaseRunning}}, UpdatedAt: 3})
	m2 := structs.ApplyMeasurement(m1, a, &structs.AnalysisMeasurement{At: t0.Add(11 * time.Second), Result: &v, Results: []float64{v}, Outcome: structs.AnalysisOutcomeSuccess})
	second := &structs.DeploymentAnalysisRequest{DeploymentID: "d1",
		Updates:   []*structs.AnalysisRunUpdate{{Group: "web", Index: 0, Run: m2, PrevPhase: structs.AnalysisPhaseRunning, PrevAt: m1.LastAt()}},
		Eval:      &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web", DeploymentID: "d1", Status: structs.EvalStatusPending},
		UpdatedAt: 4}
	add(AnalysisMeasurementRequestType, second)
	add(AnalysisMeasurementRequestType, second)
	add(AnalysisRunRequestType, &structs.DeploymentAnalysisRequest{DeploymentID: "gone",
		Updates: []*structs.AnalysisRunUpdate{{Group: "web", Index: 0, Run: run}}, UpdatedAt: 5})
	return entries
}

// Runs and measurements are the same on every server that applies the
// same log, a measurement written twice counts once, and they survive a
// snapshot.
func TestAnalysisRunsAreDeterministicAndSnapshotted(t *testing.T) {
	entries := analysisLog(t)
	apply := func() *FSM {
		f := newTestFSM(t)
		for i, e := range entries {
			if resp := f.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: e}); resp != nil {
				if err, ok := resp.(error); ok {
					t.Fatalf("entry %d: %v", i+1, err)
				}
			}
		}
		return f
	}
	f, g := apply(), apply()
	if a, b := dump(t, f), dump(t, g); a != b {
		t.Fatalf("two servers differ:\n%s", firstDiff(a, b))
	}
	d, _ := snap(f).DeploymentByID("d1")
	s := d.TaskGroups["web"]
	if len(s.Analyses) != 1 || s.Analyses[0].Successes != 2 || len(s.Analyses[0].Measurements) != 2 ||
		s.Analyses[0].Phase != structs.AnalysisPhaseSuccessful || s.WaitReason != "held" {
		t.Fatalf("runs %+v wait reason %q", s.Analyses, s.WaitReason)
	}
	if e, _ := snap(f).EvalByID("e1"); e == nil {
		t.Fatal("the evaluation of the measurement that cleared the run was not stored")
	}
	var buf bytes.Buffer
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	h := newTestFSM(t)
	if err := h.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, f), dump(t, h); a != b {
		t.Fatalf("restored state differs:\n%s", firstDiff(a, b))
	}
	d, _ = snap(h).DeploymentByID("d1")
	if r := d.TaskGroups["web"].Analyses; len(r) != 1 || len(r[0].Measurements) != 2 || *r[0].Measurements[1].Result != 0.001 {
		t.Fatalf("restored runs %+v", r)
	}
}

// A measurement is an AnalysisMeasurement event of topic Deployment.
func TestAnalysisMeasurementPublishesItsDeployment(t *testing.T) {
	entries := analysisLog(t)
	f := newTestFSM(t)
	buf := stream.NewBuffer(64)
	f.SetEvents(buf)
	sub := buf.Subscribe(stream.SubscribeRequest{Topics: map[stream.Topic][]string{stream.TopicAll: nil}, Namespace: "*"})
	defer sub.Close()
	for i, e := range entries[:4] {
		f.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: e})
	}
	if AnalysisMeasurementRequestType.String() != "AnalysisMeasurement" || AnalysisRunRequestType.String() != "AnalysisRun" {
		t.Fatal(AnalysisMeasurementRequestType.String(), AnalysisRunRequestType.String())
	}
	var types []string
	for len(types) < 5 {
		ev, err := sub.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ev.Events {
			if e.Topic == stream.TopicDeployment {
				types = append(types, e.Type)
			}
		}
		if ev.Index == 4 {
			break
		}
	}
	want := []string{stream.TypePlanResult, stream.TypeAnalysisRun, stream.TypeAnalysisMeasurement}
	if len(types) != len(want) {
		t.Fatalf("deployment events %q, want %q", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("deployment events %q, want %q", types, want)
		}
	}
}
