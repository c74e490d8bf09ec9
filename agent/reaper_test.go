package agent

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/config"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// memApplier returns a backend of its own and a function that applies an
// entry to it, failing the test on error.
func memApplier(t *testing.T) (*httpapi.MemBackend, func(fsm.MessageType, any)) {
	b := httpapi.NewMemBackend()
	return b, func(typ fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := b.Apply(context.Background(), typ, req); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReaperTakesOnlyTerminalAllocsAndEvalsOfPurgedJobs(t *testing.T) {
	b, apply := memApplier(t)
	job := func(id string) *structs.Job {
		return &structs.Job{ID: id, Name: id, Namespace: structs.DefaultNamespace, Type: structs.JobTypeBatch,
			Priority: 50, Datacenters: []string{"dc1"},
			TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 2, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	}
	eval := func(id, jobID, status string) *structs.Evaluation {
		return &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID, Type: structs.JobTypeBatch,
			Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister, Status: status, ModifyTime: time.Now().UnixNano()}
	}
	alloc := func(id, jobID string) *structs.Allocation {
		return &structs.Allocation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID, TaskGroup: "g",
			NodeID: "n1", Name: jobID + ".g[0]", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusPending}
	}
	for _, id := range []string{"kept", "purged"} {
		apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job(id), Eval: eval("e-"+id, id, structs.EvalStatusPending)})
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
			EvalID: "e-" + id, Job: job(id), AllocsPlaced: []*structs.Allocation{alloc("done-"+id, id), alloc("live-"+id, id)},
		})
		apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval("e-"+id, id, structs.EvalStatusComplete)}})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{
			{ID: "done-" + id, ClientStatus: structs.AllocClientStatusComplete},
			{ID: "live-" + id, ClientStatus: structs.AllocClientStatusRunning},
		}})
	}
	apply(fsm.JobDeregisterRequestType, &structs.JobDeregisterRequest{Namespace: structs.DefaultNamespace, JobID: "purged", Purge: true,
		Eval: eval("e-purge", "purged", structs.EvalStatusPending)})

	req, err := reapable(b.State().Snapshot(), 100, time.Now(), time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The purged job's live alloc and pending eval wait; the kept job's
	// history stays (younger than the hour).
	if !slices.Equal(req.Allocs, []string{"done-purged"}) || !slices.Equal(req.Evals, []string{"e-purged"}) {
		t.Fatalf("reapable: allocs %v, evals %v", req.Allocs, req.Evals)
	}
	apply(fsm.EvalReapRequestType, req)
	if req, err = reapable(b.State().Snapshot(), 100, time.Now(), time.Hour, time.Hour); err != nil || len(req.Allocs)+len(req.Evals) != 0 {
		t.Fatalf("after reaping: %+v, %v", req, err)
	}
}

// A registered service job's history goes once it is older than the
// threshold: evaluations that ended, and allocations the servers stopped
// or replaced whose client is done with them. A batch job's allocations
// stay while it is registered.
func TestReaperCollectsOldHistoryOfRegisteredJobs(t *testing.T) {
	b, apply := memApplier(t)
	now := time.Unix(1_800_000_000, 0)
	old, recent := now.Add(-2*time.Hour).UnixNano(), now.Add(-time.Minute).UnixNano()
	job := func(id, typ string) *structs.Job {
		return &structs.Job{ID: id, Name: id, Namespace: structs.DefaultNamespace, Type: typ, Priority: 50,
			Datacenters: []string{"dc1"},
			TaskGroups:  []*structs.TaskGroup{{Name: "g", Count: 5, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	}
	eval := func(id, jobID, typ, status string, modified int64) *structs.Evaluation {
		return &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID, Type: typ,
			Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister, Status: status, ModifyTime: modified}
	}
	type allocCase struct {
		id, desired, client, next string
		modified                  int64
	}
	place := func(j *structs.Job, cases []allocCase) {
		for _, c := range cases {
			a := &structs.Allocation{ID: c.id, Namespace: structs.DefaultNamespace, JobID: j.ID, TaskGroup: "g",
				NodeID: "n1", Name: j.ID + ".g[0]", DesiredStatus: c.desired, ClientStatus: structs.AllocClientStatusPending,
				NextAllocation: c.next}
			apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e-" + j.ID, Job: j,
				AllocsPlaced: []*structs.Allocation{a}, UpdatedAt: c.modified})
			apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
				Allocs: []*structs.Allocation{{ID: c.id, ClientStatus: c.client}}, UpdatedAt: c.modified})
		}
	}
	const run, stop = structs.AllocDesiredStatusRun, structs.AllocDesiredStatusStop
	const complete, failed, running = structs.AllocClientStatusComplete, structs.AllocClientStatusFailed, structs.AllocClientStatusRunning
	web, batch := job("web", structs.JobTypeService), job("nightly", structs.JobTypeBatch)
	for _, j := range []*structs.Job{web, batch} {
		apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: j,
			Eval: eval("e-"+j.ID, j.ID, j.Type, structs.EvalStatusPending, old)})
	}
	place(web, []allocCase{
		{"stopped-old", stop, complete, "", old},
		{"replaced-old", run, failed, "stopped-old", old}, // failed, its replacement placed
		{"stopped-recent", stop, complete, "", recent},
		{"failed-waiting", run, failed, "", old}, // may still be rescheduled
		{"running-old", run, running, "", old},
	})
	place(batch, []allocCase{{"batch-done", stop, complete, "", old}})
	apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{
		eval("e-web", "web", structs.JobTypeService, structs.EvalStatusComplete, old),
		eval("e-web-recent", "web", structs.JobTypeService, structs.EvalStatusComplete, recent),
		eval("e-web-blocked", "web", structs.JobTypeService, structs.EvalStatusBlocked, old),
		eval("e-nightly", "nightly", structs.JobTypeBatch, structs.EvalStatusComplete, old),
	}})

	req, err := reapable(b.State().Snapshot(), 100, now, time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(req.Allocs)
	slices.Sort(req.Evals)
	if !slices.Equal(req.Allocs, []string{"replaced-old", "stopped-old"}) {
		t.Errorf("allocs reaped: %v", req.Allocs)
	}
	if !slices.Equal(req.Evals, []string{"e-nightly", "e-web"}) {
		t.Errorf("evals reaped: %v", req.Evals)
	}
	apply(fsm.EvalReapRequestType, req)
	snap := b.State().Snapshot()
	if j, _ := snap.JobByID(structs.DefaultNamespace, "web"); j == nil {
		t.Fatal("the job went with its history")
	}
	for _, id := range []string{"stopped-recent", "failed-waiting", "running-old", "batch-done"} {
		if a, _ := snap.AllocByID(id); a == nil {
			t.Errorf("%s was reaped", id)
		}
	}
	// An hour later the recent ones are old enough.
	if req, err = reapable(b.State().Snapshot(), 100, now.Add(time.Hour), time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(req.Allocs, []string{"stopped-recent"}) || !slices.Equal(req.Evals, []string{"e-web-recent"}) {
		t.Fatalf("an hour later: allocs %v, evals %v", req.Allocs, req.Evals)
	}
}

// A terminal deployment goes once it is older than
// server.deployment_gc_threshold and no allocation refers to it any more
// (in the same request as its last allocations); a job's current
// deployment, whose allocations run, stays, and so does a running one.
func TestReaperCollectsOldDeploymentsNoAllocReferTo(t *testing.T) {
	b, apply := memApplier(t)
	now := time.Unix(1_800_000_000, 0)
	old, recent := now.Add(-2*time.Hour).UnixNano(), now.Add(-time.Minute).UnixNano()
	j := &structs.Job{ID: "web", Name: "web", Namespace: structs.DefaultNamespace, Type: structs.JobTypeService, Priority: 50,
		Datacenters: []string{"dc1"},
		TaskGroups:  []*structs.TaskGroup{{Name: "g", Count: 1, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: j, Eval: &structs.Evaluation{ID: "e-web",
		Namespace: structs.DefaultNamespace, JobID: "web", Type: j.Type, Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister,
		Status: structs.EvalStatusPending}})
	// deploy places one alloc under a new deployment and ends the
	// deployment with status at modified.
	deploy := func(id, alloc, status string, modified int64) {
		d := &structs.Deployment{ID: id, Namespace: structs.DefaultNamespace, JobID: "web", Status: structs.DeploymentStatusRunning,
			TaskGroups: map[string]*structs.DeploymentState{"g": {DesiredTotal: 1}}}
		a := &structs.Allocation{ID: alloc, Namespace: structs.DefaultNamespace, JobID: "web", TaskGroup: "g", NodeID: "n1",
			Name: "web.g[0]", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending, DeploymentID: id}
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e-web", Job: j,
			AllocsPlaced: []*structs.Allocation{a}, Deployment: d, UpdatedAt: modified})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
			Allocs: []*structs.Allocation{{ID: alloc, ClientStatus: structs.AllocClientStatusRunning}}, UpdatedAt: modified})
		if status != structs.DeploymentStatusRunning {
			apply(fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
				DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: id, Status: status}, UpdatedAt: modified})
		}
	}
	// stop stops an alloc and its client reports it complete.
	stop := func(alloc string, modified int64) {
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e-web",
			AllocsStopped: []*structs.AllocStopUpdate{{AllocID: alloc}}, UpdatedAt: modified})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
			Allocs: []*structs.Allocation{{ID: alloc, ClientStatus: structs.AllocClientStatusComplete}}, UpdatedAt: modified})
	}
	deploy("d-old", "a-old", structs.DeploymentStatusSuccessful, old)
	stop("a-old", old)
	deploy("d-stopped-recent", "a-recent", structs.DeploymentStatusCancelled, old)
	stop("a-recent", recent) // its alloc is too young to go: it still refers to it
	deploy("d-current", "a-current", structs.DeploymentStatusSuccessful, old)
	deploy("d-running", "a-running", structs.DeploymentStatusRunning, old)

	req, err := reapable(b.State().Snapshot(), 100, now, time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(req.Allocs, []string{"a-old"}) || !slices.Equal(req.Deployments, []string{"d-old"}) {
		t.Fatalf("reapable: allocs %v, deployments %v", req.Allocs, req.Deployments)
	}
	apply(fsm.EvalReapRequestType, req)
	snap := b.State().Snapshot()
	if d, _ := snap.DeploymentByID("d-old"); d != nil {
		t.Error("d-old is still stored")
	}
	for _, id := range []string{"d-stopped-recent", "d-current", "d-running"} {
		if d, _ := snap.DeploymentByID(id); d == nil {
			t.Errorf("%s was collected", id)
		}
	}
	// With a longer threshold nothing old enough is left.
	if req, err = reapable(b.State().Snapshot(), 100, now.Add(time.Hour), time.Hour, 3*time.Hour); err != nil || len(req.Deployments) != 0 {
		t.Fatalf("with a 3h threshold: %+v, %v", req, err)
	}
	// An hour later the recent alloc goes, and its deployment with it.
	if req, err = reapable(b.State().Snapshot(), 100, now.Add(time.Hour), time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(req.Allocs, []string{"a-recent"}) || !slices.Equal(req.Deployments, []string{"d-stopped-recent"}) {
		t.Fatalf("an hour later: allocs %v, deployments %v", req.Allocs, req.Deployments)
	}
	// The state refuses to delete a running deployment, whatever asks.
	apply(fsm.EvalReapRequestType, &structs.EvalReapRequest{Deployments: []string{"d-running"}})
	if d, _ := b.State().Snapshot().DeploymentByID("d-running"); d == nil {
		t.Error("a running deployment was deleted")
	}
}

// A stopped job goes, through a purge, once it has been stopped, and its
// allocations and evaluations finished, for server.job_gc_threshold; not
// before. A running job, a stopped job whose alloc still runs on its
// client, and a registered periodic parent are never collected; a batch job
// that finished is. The purged job's allocs and evals go on the next pass.
func TestReaperCollectsStoppedJobsAfterJobGCThreshold(t *testing.T) {
	b, apply := memApplier(t)
	now := time.Unix(1_800_000_000, 0)
	long, stopAt := now.Add(-100*time.Hour).UnixNano(), now.Add(-time.Hour).UnixNano()
	th := gcThresholds{Eval: time.Hour, Deployment: time.Hour, Job: 4 * time.Hour, Node: 24 * time.Hour}
	job := func(id, typ string) *structs.Job {
		return &structs.Job{ID: id, Name: id, Namespace: structs.DefaultNamespace, Type: typ, Priority: 50,
			Datacenters: []string{"dc1"},
			TaskGroups:  []*structs.TaskGroup{{Name: "g", Count: 1, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	}
	eval := func(id, jobID, status string, modified int64) *structs.Evaluation {
		return &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID, Type: structs.JobTypeService,
			Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister, Status: status, ModifyTime: modified}
	}
	// run registers j long ago with one alloc whose client reports status.
	run := func(j *structs.Job, status string) {
		apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: j, SubmitTime: long,
			Eval: eval("e-"+j.ID, j.ID, structs.EvalStatusPending, long)})
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e-" + j.ID, Job: j, UpdatedAt: long,
			AllocsPlaced: []*structs.Allocation{{ID: "a-" + j.ID, Namespace: structs.DefaultNamespace, JobID: j.ID, TaskGroup: "g",
				NodeID: "n1", Name: j.ID + ".g[0]", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending}}})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{UpdatedAt: long,
			Allocs: []*structs.Allocation{{ID: "a-" + j.ID, ClientStatus: status}}})
		apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval("e-"+j.ID, j.ID, structs.EvalStatusComplete, long)}})
	}
	// stop stops j at stopAt, its alloc stopped by the servers, its
	// client reporting clientStatus.
	stop := func(j *structs.Job, clientStatus string) {
		apply(fsm.JobDeregisterRequestType, &structs.JobDeregisterRequest{Namespace: structs.DefaultNamespace, JobID: j.ID,
			SubmitTime: stopAt, Eval: eval("e-stop-"+j.ID, j.ID, structs.EvalStatusPending, stopAt)})
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e-stop-" + j.ID, UpdatedAt: stopAt,
			AllocsStopped: []*structs.AllocStopUpdate{{AllocID: "a-" + j.ID}}})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{UpdatedAt: stopAt,
			Allocs: []*structs.Allocation{{ID: "a-" + j.ID, ClientStatus: clientStatus}}})
		apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{
			eval("e-stop-"+j.ID, j.ID, structs.EvalStatusComplete, stopAt)}})
	}
	stopped, live := job("stopped", structs.JobTypeService), job("stopped-live", structs.JobTypeService)
	running, batch := job("running", structs.JobTypeService), job("batch", structs.JobTypeBatch)
	run(stopped, structs.AllocClientStatusRunning)
	stop(stopped, structs.AllocClientStatusComplete)
	run(live, structs.AllocClientStatusRunning)
	stop(live, structs.AllocClientStatusRunning) // its client has not stopped it yet
	run(running, structs.AllocClientStatusRunning)
	run(batch, structs.AllocClientStatusComplete)
	periodic := job("periodic", structs.JobTypeBatch)
	periodic.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "0 * * * *", SpecType: structs.PeriodicSpecCron}
	apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: periodic, SubmitTime: long})
	// One that never ran: only its stop's time tells its age.
	apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job("empty", structs.JobTypeService), SubmitTime: long})
	apply(fsm.JobDeregisterRequestType, &structs.JobDeregisterRequest{Namespace: structs.DefaultNamespace, JobID: "empty", SubmitTime: stopAt})

	ids := func(at time.Time) []string {
		t.Helper()
		jobs, err := reapableJobs(b.State().Snapshot(), 100, at, th.Job)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		slices.Sort(out)
		return out
	}
	// An hour after the stop, three hours short of the threshold, the
	// stopped job stays; the batch job, done 100 hours ago, goes.
	if got := ids(now); !slices.Equal(got, []string{"batch"}) {
		t.Fatalf("an hour after the stop: %v", got)
	}
	if got := ids(now.Add(3 * time.Hour)); !slices.Equal(got, []string{"batch"}) {
		t.Fatalf("at the threshold: %v", got)
	}
	if got := ids(now.Add(3*time.Hour + time.Second)); !slices.Equal(got, []string{"batch", "empty", "stopped"}) {
		t.Fatalf("past the threshold: %v", got)
	}
	if got := ids(now.Add(1000 * time.Hour)); !slices.Equal(got, []string{"batch", "empty", "stopped"}) {
		t.Fatalf("1000 hours later: %v", got)
	}

	// A pass of the reaper purges them through the log, and the next one
	// deletes their allocs and evals. "empty", run again while the pass
	// purges "batch" before it, stays.
	later := now.Add(3*time.Hour + time.Second)
	rerun := false
	applyRunning := func(ctx context.Context, typ fsm.MessageType, req any) (any, uint64, error) {
		if typ == fsm.JobDeregisterRequestType && !rerun {
			rerun = true
			apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job("empty", structs.JobTypeService), SubmitTime: later.UnixNano()})
		}
		return b.Apply(ctx, typ, req)
	}
	n, err := reap(context.Background(), applyRunning, b.State(), later, th)
	if err != nil {
		t.Fatal(err)
	}
	if n.Jobs != 2 {
		t.Fatalf("first pass: %+v", n)
	}
	snap := b.State().Snapshot()
	if j, _ := snap.JobByID(structs.DefaultNamespace, "empty"); j == nil || j.Stop {
		t.Errorf("the job run again during the pass was purged or is stopped: %+v", j)
	}
	for _, id := range []string{"stopped", "batch"} {
		if j, _ := snap.JobByID(structs.DefaultNamespace, id); j != nil {
			t.Errorf("%s is still registered", id)
		}
		if vs, _ := snap.JobVersionsByID(structs.DefaultNamespace, id); len(vs) != 0 {
			t.Errorf("%s keeps %d versions", id, len(vs))
		}
	}
	for _, id := range []string{"stopped-live", "running", "periodic"} {
		if j, _ := snap.JobByID(structs.DefaultNamespace, id); j == nil {
			t.Errorf("%s was collected", id)
		}
	}
	if n, err = reap(context.Background(), b.Apply, b.State(), later, th); err != nil {
		t.Fatal(err)
	}
	snap = b.State().Snapshot()
	for _, id := range []string{"a-stopped", "a-batch"} {
		if a, _ := snap.AllocByID(id); a != nil {
			t.Errorf("%s is still stored after the second pass (%+v)", id, n)
		}
	}
	for _, id := range []string{"e-stopped", "e-stop-stopped", "e-batch"} {
		if e, _ := snap.EvalByID(id); e != nil {
			t.Errorf("%s is still stored after the second pass (%+v)", id, n)
		}
	}
	if n.Jobs != 0 {
		t.Errorf("second pass purged %d jobs", n.Jobs)
	}
}

// A node down for server.node_gc_threshold goes, once nothing on it is
// live; not before. A ready node, and a down node with an allocation not
// terminal, are never collected.
func TestReaperCollectsDownNodesAfterNodeGCThreshold(t *testing.T) {
	b, apply := memApplier(t)
	now := time.Unix(1_800_000_000, 0)
	long, downAt := now.Add(-100*time.Hour).UnixNano(), now.Add(-time.Hour).UnixNano()
	th := gcThresholds{Eval: time.Hour, Deployment: time.Hour, Job: 4 * time.Hour, Node: 24 * time.Hour}
	j := &structs.Job{ID: "web", Name: "web", Namespace: structs.DefaultNamespace, Type: structs.JobTypeService, Priority: 50,
		Datacenters: []string{"dc1"},
		TaskGroups:  []*structs.TaskGroup{{Name: "g", Count: 3, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: j, SubmitTime: long})
	place := func(alloc, node string, at int64) {
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e", Job: j, UpdatedAt: at,
			AllocsPlaced: []*structs.Allocation{{ID: alloc, Namespace: structs.DefaultNamespace, JobID: "web", TaskGroup: "g",
				NodeID: node, Name: "web.g[0]", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending}}})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{UpdatedAt: at,
			Allocs: []*structs.Allocation{{ID: alloc, ClientStatus: structs.AllocClientStatusRunning}}})
	}
	for _, id := range []string{"ready", "down", "down-live"} {
		apply(fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: &structs.Node{ID: id, Name: id, Datacenter: "dc1",
			NodePool: "default", Status: structs.NodeStatusReady, StatusUpdatedAt: long,
			SchedulingEligibility: structs.NodeSchedulingEligible}})
		place("a-"+id, id, long)
	}
	for _, id := range []string{"down", "down-live"} {
		// Going down, its running alloc is marked lost.
		apply(fsm.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{NodeID: id, Status: structs.NodeStatusDown, UpdatedAt: downAt})
	}
	// One placed on down-live afterwards, not terminal.
	place("a-down-live-2", "down-live", downAt)

	ids := func(at time.Time) []string {
		t.Helper()
		out, err := reapableNodes(b.State().Snapshot(), 100, at, th.Node)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := ids(now); len(got) != 0 {
		t.Fatalf("an hour after going down: %v", got)
	}
	if got := ids(now.Add(23 * time.Hour)); len(got) != 0 {
		t.Fatalf("at the threshold: %v", got)
	}
	if got := ids(now.Add(23*time.Hour + time.Second)); !slices.Equal(got, []string{"down"}) {
		t.Fatalf("past the threshold: %v", got)
	}
	if got := ids(now.Add(1000 * time.Hour)); !slices.Equal(got, []string{"down"}) {
		t.Fatalf("1000 hours later: %v", got)
	}
	n, err := reap(context.Background(), b.Apply, b.State(), now.Add(23*time.Hour+time.Second), th)
	if err != nil {
		t.Fatal(err)
	}
	if n.Nodes != 1 {
		t.Fatalf("pass: %+v", n)
	}
	snap := b.State().Snapshot()
	if nd, _ := snap.NodeByID("down"); nd != nil {
		t.Error("the down node is still registered")
	}
	for _, id := range []string{"ready", "down-live"} {
		if nd, _ := snap.NodeByID(id); nd == nil {
			t.Errorf("%s was deregistered", id)
		}
	}
}

// server.job_gc_threshold and node_gc_threshold: Nomad's defaults, read
// from the file into the agent's settings, at least 1s, an error located
// where the value is written.
func TestReaperGCThresholdsConfig(t *testing.T) {
	const base = "data_dir = \"/tmp/x\"\nserver {\n  enabled          = true\n  bootstrap_expect = 1\n"
	check := func(src string) (Config, error) {
		t.Helper()
		c, _, err := config.Parse("agent.hcl", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		merged := config.Default().Merge(c)
		if _, err := merged.Check(); err != nil {
			return Config{}, err
		}
		return FromConfig(merged), nil
	}
	cfg, err := check(base + "}\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.JobGCThreshold != 4*time.Hour || cfg.NodeGCThreshold != 24*time.Hour {
		t.Errorf("defaults: job %s, node %s", cfg.JobGCThreshold, cfg.NodeGCThreshold)
	}
	cfg, err = check(base + "  job_gc_threshold  = \"30m\"\n  node_gc_threshold = \"2h\"\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.JobGCThreshold != 30*time.Minute || cfg.NodeGCThreshold != 2*time.Hour {
		t.Errorf("set: job %s, node %s", cfg.JobGCThreshold, cfg.NodeGCThreshold)
	}
	a := &Agent{cfg: cfg}
	if th := a.gcThresholds(); th.Job != 30*time.Minute || th.Node != 2*time.Hour || th.Eval != time.Hour {
		t.Errorf("the reaper's thresholds: %+v", th)
	}
	if th := (&Agent{}).gcThresholds(); th.Job != 4*time.Hour || th.Node != 24*time.Hour {
		t.Errorf("the reaper's thresholds unset: %+v", th)
	}
	for _, tc := range []struct{ src, want string }{
		{base + "  job_gc_threshold = \"500ms\"\n}\n", "agent.hcl:5:3: server.job_gc_threshold must be at least 1s (got 500ms)"},
		{base + "  node_gc_threshold = \"0s\"\n}\n", "agent.hcl:5:3: server.node_gc_threshold must be at least 1s (got 0s)"},
		{base + "  node_gc_threshold = \"soon\"\n}\n", "agent.hcl:5:23: server.node_gc_threshold must be a duration"},
	} {
		c, _, err := config.Parse("agent.hcl", []byte(tc.src))
		if err == nil {
			_, err = config.Default().Merge(c).Check()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
	}
}
