package fsm

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// A job restart writes its deployment and evaluation in one entry; a
// second restart while the first is active, or one of a version no longer
// current, is refused with nothing written.
func TestJobRestartEntry(t *testing.T) {
	f := newTestFSM(t)
	job := statetest.Job("web", 2)
	applyOK(t, f, 1, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := snap(f).JobByID("default", "web")
	restart := func(id string, version uint64) *structs.JobRestartRequest {
		return &structs.JobRestartRequest{
			Deployment: &structs.Deployment{
				ID: id, Namespace: "default", JobID: "web", JobVersion: version, JobCreateIndex: stored.CreateIndex,
				Status: structs.DeploymentStatusRunning, StatusDescription: structs.RestartDescription(false),
				Restart: &structs.RestartSpec{Groups: []string{"web"}}, CreateTime: 5,
			},
			Eval:      &structs.Evaluation{ID: "e-" + id, Namespace: "default", JobID: "web", DeploymentID: id, Status: structs.EvalStatusPending, Type: structs.JobTypeService},
			UpdatedAt: 5,
		}
	}
	applyOK(t, f, 2, JobRestartRequestType, restart("r1", stored.Version))
	d, _ := snap(f).DeploymentByID("r1")
	if d == nil || !d.IsRestart() || d.CreateIndex != 2 || d.Restart.Groups[0] != "web" {
		t.Fatalf("deployment %+v", d)
	}
	if e, _ := snap(f).EvalByID("e-r1"); e == nil {
		t.Fatal("no evaluation")
	}
	for i, req := range []*structs.JobRestartRequest{restart("r2", stored.Version), restart("r3", stored.Version+1)} {
		if i == 1 {
			// r1 over: only the version is wrong now.
			applyOK(t, f, 3, DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
				DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "r1", Status: structs.DeploymentStatusSuccessful}})
		}
		resp := f.Apply(&raft.Log{Index: uint64(10 + i), Type: raft.LogCommand, Data: entry(t, JobRestartRequestType, req)})
		err, _ := resp.(error)
		if !errors.Is(err, state.ErrConflict) {
			t.Fatalf("restart %d: %v, want a conflict", i, resp)
		}
		if d, _ := snap(f).DeploymentByID(req.Deployment.ID); d != nil {
			t.Fatalf("refused restart %d was written", i)
		}
	}
	if JobRestartRequestType.String() != "JobRestart" {
		t.Fatal(JobRestartRequestType.String())
	}
}

// A restart's deployment and the in-place marks of its allocs are the
// same on every server that applies the same log, and survive a snapshot.
func TestJobRestartIsDeterministicAndSnapshotted(t *testing.T) {
	job := statetest.Job("web", 2)
	node := statetest.Node("n1")
	var entries [][]byte
	add := func(mt MessageType, req any) { entries = append(entries, entry(t, mt, req)) }
	add(NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	add(JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	a := statetest.Alloc(job, node, "e0", "", 0)
	add(ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e0", Job: job, AllocsPlaced: []*structs.Allocation{a}, UpdatedAt: 3})
	add(JobRestartRequestType, &structs.JobRestartRequest{
		Deployment: &structs.Deployment{ID: "r1", Namespace: "default", JobID: "web", JobCreateIndex: 2,
			Status: structs.DeploymentStatusRunning, CreateTime: 4,
			Restart: &structs.RestartSpec{Groups: []string{"web"}, BatchSize: structs.Percent(50), BatchWaitAsk: true, OnError: "ask"}},
		Eval:      &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web", DeploymentID: "r1", Status: structs.EvalStatusPending},
		UpdatedAt: 4,
	})
	marked := a.Copy()
	marked.Job, marked.DeploymentID, marked.DeploymentStatus = nil, "r1", nil
	marked.DesiredRestart = &structs.DesiredRestart{DeploymentID: "r1", Tasks: []string{"web"}}
	add(ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e1", Job: job, AllocsUpdated: []*structs.Allocation{marked},
		Deployment: &structs.Deployment{ID: "r1", Namespace: "default", JobID: "web", JobCreateIndex: 2,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, OnFailure: structs.OnFailurePause}}},
		UpdatedAt: 5})
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
	got, _ := snap(f).AllocByID(a.ID)
	if got.DesiredRestart == nil || got.DesiredRestart.DeploymentID != "r1" || got.DeploymentID != "r1" {
		t.Fatalf("alloc %+v", got)
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
	d, _ := snap(h).DeploymentByID("r1")
	if d == nil || d.Restart == nil || !d.Restart.BatchWaitAsk || d.Restart.BatchSize.String() != "50%" || d.TaskGroups["web"] == nil {
		t.Fatalf("restored restart %+v", d)
	}
}

// A restart's entry publishes its deployment and evaluation, as a plan's
// does: the event stream's readers (the UI among them) learn of it.
func TestJobRestartPublishesItsDeployment(t *testing.T) {
	f := newTestFSM(t)
	buf := stream.NewBuffer(64)
	f.SetEvents(buf)
	sub := buf.Subscribe(stream.SubscribeRequest{Topics: map[stream.Topic][]string{stream.TopicAll: nil}, Namespace: "*"})
	defer sub.Close()
	job := statetest.Job("web", 1)
	applyOK(t, f, 1, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := snap(f).JobByID("default", "web")
	applyOK(t, f, 2, JobRestartRequestType, &structs.JobRestartRequest{
		Deployment: &structs.Deployment{ID: "r1", Namespace: "default", JobID: "web", JobCreateIndex: stored.CreateIndex,
			Status: structs.DeploymentStatusRunning, Restart: &structs.RestartSpec{Groups: []string{"web"}}},
		Eval:      &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web", DeploymentID: "r1", Status: structs.EvalStatusPending},
		UpdatedAt: 2,
	})
	got := strings.Join(drain(t, sub), "\n")
	for _, want := range []string{"2 PlanResult Deployment:r1 web", "2 PlanResult Evaluation:e1 web"} {
		if !strings.Contains(got, want) {
			t.Fatalf("events lack %q:\n%s", want, got)
		}
	}
}
