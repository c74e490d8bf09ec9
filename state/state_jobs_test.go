package state

import (
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestRegisterJobVersions(t *testing.T) {
	s := newStore(t)
	job := statetest.Job("web", 2)
	res, err := s.RegisterJob(10, &structs.JobRegisterRequest{Job: job, Eval: statetest.Eval("e1", job), SubmitTime: 1000})
	must(t, err)
	if res.JobVersion != 0 || res.JobModifyIndex != 10 || !res.SpecChanged {
		t.Fatalf("first register result = %+v", res)
	}
	j := get[*structs.Job](t)(s.Snapshot().JobByID("default", "web"))
	if j.Version != 0 || j.CreateIndex != 10 || j.ModifyIndex != 10 || j.JobModifyIndex != 10 || j.SubmitTime != 1000 {
		t.Fatalf("stored job = v%d %d/%d/%d submit %d", j.Version, j.CreateIndex, j.ModifyIndex, j.JobModifyIndex, j.SubmitTime)
	}
	if j.Status != structs.JobStatusPending {
		t.Fatalf("status with a pending eval = %q, want pending", j.Status)
	}

	// Identical re-submission: same version, but the eval is stored.
	e2 := statetest.Eval("e2", job)
	res, err = s.RegisterJob(11, &structs.JobRegisterRequest{Job: job, Eval: e2, SubmitTime: 2000})
	must(t, err)
	if res.JobVersion != 0 || res.JobModifyIndex != 10 || res.SpecChanged {
		t.Fatalf("identical register result = %+v", res)
	}
	snap := s.Snapshot()
	if e := get[*structs.Evaluation](t)(snap.EvalByID(e2.ID)); e == nil || e.JobModifyIndex != 10 {
		t.Fatalf("eval of identical register = %+v", e)
	}
	if j := get[*structs.Job](t)(snap.JobByID("default", "web")); j.SubmitTime != 1000 {
		t.Fatalf("identical register changed SubmitTime to %d", j.SubmitTime)
	}

	// A changed spec is a new version.
	changed := job.Copy()
	changed.TaskGroups[0].Count = 5
	res, err = s.RegisterJob(12, &structs.JobRegisterRequest{Job: changed, SubmitTime: 3000})
	must(t, err)
	if res.JobVersion != 1 || res.JobModifyIndex != 12 {
		t.Fatalf("changed register result = %+v", res)
	}
	j = get[*structs.Job](t)(s.Snapshot().JobByID("default", "web"))
	if j.Version != 1 || j.CreateIndex != 10 || j.SubmitTime != 3000 {
		t.Fatalf("v1 = %+v", j)
	}
	old := get[*structs.Job](t)(s.Snapshot().JobByIDAndVersion("default", "web", 0))
	if old == nil || old.TaskGroups[0].Count != 2 {
		t.Fatalf("version 0 not kept: %+v", old)
	}
}

func TestJobVersionsPrunedKeepingStable(t *testing.T) {
	s := newStore(t)
	job := statetest.Job("web", 1)
	registerJob(t, s, 1, job)
	must(t, s.SetJobStability(2, &structs.JobStabilityRequest{Namespace: "default", JobID: "web", JobVersion: 0, Stable: true}))
	for i := 2; i <= 9; i++ { // versions 1..8
		c := job.Copy()
		c.Meta = map[string]string{"rev": string(rune('0' + i))}
		registerJob(t, s, uint64(i*10), c)
	}
	versions := get[[]*structs.Job](t)(s.Snapshot().JobVersionsByID("default", "web"))
	var got []uint64
	for _, v := range versions {
		got = append(got, v.Version)
	}
	want := []uint64{8, 7, 6, 5, 4, 3, 0}
	if len(got) != len(want) {
		t.Fatalf("versions = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("versions = %v, want %v", got, want)
		}
	}
	stable := get[*structs.Job](t)(s.Snapshot().LatestStableJobVersion("default", "web"))
	if stable == nil || stable.Version != 0 {
		t.Fatalf("latest stable = %+v", stable)
	}
}

func TestJobStabilityMarksCurrent(t *testing.T) {
	s := newStore(t)
	registerJob(t, s, 1, statetest.Job("web", 1))
	must(t, s.SetJobStability(2, &structs.JobStabilityRequest{JobID: "web", JobVersion: 0, Stable: true}))
	snap := s.Snapshot()
	if !get[*structs.Job](t)(snap.JobByID("default", "web")).Stable {
		t.Fatal("current job not marked stable")
	}
	if !get[*structs.Job](t)(snap.JobByIDAndVersion("default", "web", 0)).Stable {
		t.Fatal("version not marked stable")
	}
	err := s.SetJobStability(3, &structs.JobStabilityRequest{JobID: "web", JobVersion: 7, Stable: true})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown version: err = %v", err)
	}
}

func TestDeregisterStopsAndCancelsDeployment(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 1))
	dep := statetest.Deployment(job, 0)
	must(t, s.update(2, func(tx *WriteTxn) error { return s.UpsertDeploymentTxn(tx, dep, 0) }))
	eval := statetest.Eval("stop", job)
	eval.TriggeredBy = structs.EvalTriggerJobDeregister
	res, err := s.DeregisterJob(3, &structs.JobDeregisterRequest{Namespace: "default", JobID: "web", Eval: eval, SubmitTime: 99})
	must(t, err)
	if res == nil || res.JobVersion != 1 {
		t.Fatalf("stop result = %+v", res)
	}
	snap := s.Snapshot()
	j := get[*structs.Job](t)(snap.JobByID("default", "web"))
	if !j.Stop || j.Version != 1 {
		t.Fatalf("stopped job = stop %v v%d", j.Stop, j.Version)
	}
	d := get[*structs.Deployment](t)(snap.DeploymentByID(dep.ID))
	if d.Status != structs.DeploymentStatusCancelled || d.StatusDescription != structs.DeploymentStatusDescriptionStoppedJob {
		t.Fatalf("deployment = %s %q", d.Status, d.StatusDescription)
	}
	if e := get[*structs.Evaluation](t)(snap.EvalByID(eval.ID)); e == nil || e.JobModifyIndex != 3 {
		t.Fatalf("deregister eval = %+v", e)
	}

	res, err = s.DeregisterJob(4, &structs.JobDeregisterRequest{JobID: "web", Purge: true})
	must(t, err)
	if res != nil {
		t.Fatalf("purge result = %+v, want nil", res)
	}
	snap = s.Snapshot()
	if j := get[*structs.Job](t)(snap.JobByID("default", "web")); j != nil {
		t.Fatal("purged job still present")
	}
	if v := get[[]*structs.Job](t)(snap.JobVersionsByID("default", "web")); len(v) != 0 {
		t.Fatalf("purged job has %d versions", len(v))
	}
	if _, err := s.DeregisterJob(5, &structs.JobDeregisterRequest{JobID: "web"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deregister unknown: err = %v", err)
	}
}

func TestJobStatusDerived(t *testing.T) {
	s := newStore(t)
	node := statetest.Node("a")
	job := statetest.Job("web", 1)
	eval := statetest.Eval("e", job)
	_, err := s.RegisterJob(1, &structs.JobRegisterRequest{Job: job, Eval: eval})
	must(t, err)
	status := func() string {
		return get[*structs.Job](t)(s.Snapshot().JobByID("default", "web")).Status
	}
	if status() != structs.JobStatusPending {
		t.Fatalf("with pending eval: %q", status())
	}
	stored := get[*structs.Job](t)(s.Snapshot().JobByID("default", "web"))
	a := statetest.Alloc(stored, node, eval.ID, "", 0)
	must(t, s.UpsertAllocs(2, []*structs.Allocation{a}, 1))
	if status() != structs.JobStatusRunning {
		t.Fatalf("with a live alloc: %q", status())
	}
	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	must(t, s.UpsertEvals(3, []*structs.Evaluation{done}))
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete}},
	}))
	if status() != structs.JobStatusDead {
		t.Fatalf("all allocs complete, evals done: %q", status())
	}
	if get[uint64](t)(s.Snapshot().Index(TableJobs)) != 4 {
		t.Fatal("status change did not bump the jobs index")
	}
}

func TestRegisterJobEnforceIndex(t *testing.T) {
	s := newStore(t)
	job := statetest.Job("web", 1)
	reg := func(index, check uint64, j *structs.Job) error {
		_, err := s.RegisterJob(index, &structs.JobRegisterRequest{Job: j, EnforceIndex: true, JobModifyIndex: check})
		return err
	}
	if err := reg(1, 5, job); !errors.Is(err, ErrConflict) {
		t.Fatalf("check index 5 on a new job: err = %v", err)
	}
	must(t, reg(2, 0, job))
	changed := job.Copy()
	changed.Meta = map[string]string{"v": "2"}
	if err := reg(3, 0, changed); !errors.Is(err, ErrConflict) {
		t.Fatalf("check index 0 on an existing job: err = %v", err)
	}
	if err := reg(4, 1, changed); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "conflicting job modify index 2") {
		t.Fatalf("stale check index: err = %v", err)
	}
	must(t, reg(5, 2, changed))
	if j := get[*structs.Job](t)(s.Snapshot().JobByID("default", "web")); j.Version != 1 || j.JobModifyIndex != 5 {
		t.Fatalf("job after checked register = v%d at %d", j.Version, j.JobModifyIndex)
	}
}

// TestJobStatusPerNodeJobs: a system job is running until it is stopped,
// as Nomad's; a sysbatch job is a batch job in its status: dead once every
// alloc has finished and no evaluation is pending.
func TestJobStatusPerNodeJobs(t *testing.T) {
	for _, c := range []struct{ typ, whenDone string }{
		{structs.JobTypeSystem, structs.JobStatusRunning},
		{structs.JobTypeSysBatch, structs.JobStatusDead},
	} {
		t.Run(c.typ, func(t *testing.T) {
			s := newStore(t)
			job := statetest.Job("per-node", 1)
			job.Type = c.typ
			eval := statetest.Eval("e", job)
			_, err := s.RegisterJob(1, &structs.JobRegisterRequest{Job: job, Eval: eval})
			must(t, err)
			status := func() string {
				return get[*structs.Job](t)(s.Snapshot().JobByID("default", "per-node")).Status
			}
			stored := get[*structs.Job](t)(s.Snapshot().JobByID("default", "per-node"))
			a := statetest.Alloc(stored, statetest.Node("a"), eval.ID, "", 0)
			b := statetest.Alloc(stored, statetest.Node("b"), eval.ID, "", 0)
			b.ID = statetest.ID("second alloc") // both have index 0, as a per-node job's allocs
			must(t, s.UpsertAllocs(2, []*structs.Allocation{a, b}, 1))
			done := eval.Copy()
			done.Status = structs.EvalStatusComplete
			must(t, s.UpsertEvals(3, []*structs.Evaluation{done}))
			must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{
				Allocs: []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete}},
			}))
			if status() != structs.JobStatusRunning {
				t.Fatalf("one alloc still running: %q", status())
			}
			must(t, s.UpdateAllocsFromClient(5, &structs.AllocClientUpdateRequest{
				Allocs: []*structs.Allocation{{ID: b.ID, ClientStatus: structs.AllocClientStatusFailed}},
			}))
			if status() != c.whenDone {
				t.Fatalf("every alloc finished: %q, want %q", status(), c.whenDone)
			}
		})
	}
}

// server.job_tracked_versions sets how many versions are kept.
func TestJobTrackedVersionsConfigurable(t *testing.T) {
	s := newStore(t)
	s.SetJobTrackedVersions(2)
	job := statetest.Job("web", 1)
	registerJob(t, s, 1, job)
	for i := 2; i <= 6; i++ { // versions 1..5
		c := job.Copy()
		c.Meta = map[string]string{"rev": string(rune('0' + i))}
		registerJob(t, s, uint64(i*10), c)
	}
	var got []uint64
	for _, v := range get[[]*structs.Job](t)(s.Snapshot().JobVersionsByID("default", "web")) {
		got = append(got, v.Version)
	}
	if len(got) != 2 || got[0] != 5 || got[1] != 4 {
		t.Fatalf("versions = %v, want [5 4]", got)
	}
}
