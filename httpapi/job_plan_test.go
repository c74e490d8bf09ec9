package httpapi

import (
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/jobdiff"
	"github.com/droverhq/drover/structs"
)

func TestJobPlanWithoutNodesReportsFailedPlacements(t *testing.T) {
	b, srv := newTestAPI(t)
	code, body, _ := do(t, "PUT", srv.URL+"/v1/job/web/plan", strings.Replace(webJob, `{"Job":`, `{"Diff":true,"Job":`, 1))
	var resp JobPlanResponse
	decode(t, body, &resp)
	if code != 200 || resp.JobModifyIndex != 0 {
		t.Fatalf("plan: %d %s", code, body)
	}
	if u := resp.Annotations.DesiredTGUpdates["g"]; u == nil || u.Place != 1 {
		t.Fatalf("desired updates %s", body)
	}
	if resp.FailedTGAllocs["g"] == nil {
		t.Fatalf("no failed placements without nodes: %s", body)
	}
	// The blocked evaluation the scheduling pass would make, as Nomad's
	// plan answers it (nothing is written: see below).
	if len(resp.CreatedEvals) != 1 || resp.CreatedEvals[0].Status != structs.EvalStatusBlocked ||
		resp.CreatedEvals[0].TriggeredBy != structs.EvalTriggerQueuedAllocs || resp.CreatedEvals[0].JobID != "web" {
		t.Fatalf("created evals: %s", body)
	}
	if evals, _ := b.State().Snapshot().Evals(); len(evals) != 0 {
		t.Fatalf("plan wrote evaluations: %v", evals)
	}
	if resp.Diff == nil || resp.Diff.Type != jobdiff.TypeAdded || len(resp.Diff.TaskGroups) != 1 ||
		resp.Diff.TaskGroups[0].Type != jobdiff.TypeAdded || jobdiff.UpdatesString(resp.Diff.TaskGroups[0].Updates) != "1 create" {
		t.Fatalf("diff %s", body)
	}
	// Nothing was written.
	if jobs, _ := b.State().Snapshot().Jobs(); len(jobs) != 0 {
		t.Fatalf("plan registered the job: %v", jobs)
	}
}

func TestJobPlanAgainstRunningAllocs(t *testing.T) {
	b, srv := newTestAPI(t)
	b.mustApply(t, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: testNodeFor("n1")})
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	job, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	b.mustApply(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: "e", Job: job, AllocsPlaced: []*structs.Allocation{{
			ID: "a0", Namespace: structs.DefaultNamespace, Name: structs.AllocName("web", "g", 0), NodeID: "n1",
			JobID: "web", TaskGroup: "g", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning,
		}},
		UpdatedAt: 1,
	})

	plan := func(jobJSON string) (int, string, *JobPlanResponse) {
		t.Helper()
		code, body, _ := do(t, "PUT", srv.URL+"/v1/job/web/plan", `{"Diff":true,"Job":`+jobJSON+`}`)
		var resp JobPlanResponse
		if code == 200 {
			decode(t, body, &resp)
		}
		return code, body, &resp
	}
	same := strings.TrimSuffix(strings.TrimPrefix(webJob, `{"Job":`), `}`)
	code, body, resp := plan(same)
	if u := resp.Annotations.DesiredTGUpdates["g"]; code != 200 || u.Ignore != 1 || u.Place != 0 ||
		resp.JobModifyIndex != job.JobModifyIndex || resp.Diff.Type != jobdiff.TypeNone || len(resp.FailedTGAllocs) != 0 {
		t.Fatalf("plan of the same job: %d %s", code, body)
	}
	changed := strings.Replace(same, `/bin/true`, `/bin/false`, 1)
	code, body, resp = plan(changed)
	if u := resp.Annotations.DesiredTGUpdates["g"]; code != 200 || u.DestructiveUpdate != 1 ||
		resp.Diff.Type != jobdiff.TypeEdited || jobdiff.UpdatesString(resp.Diff.TaskGroups[0].Updates) != "1 create/destroy update" {
		t.Fatalf("plan of a changed task: %d %s", code, body)
	}
	scaled := strings.Replace(same, `"Count":1`, `"Count":3`, 1)
	code, body, resp = plan(scaled)
	if u := resp.Annotations.DesiredTGUpdates["g"]; code != 200 || u.Place != 2 || u.Ignore+u.InPlaceUpdate != 1 {
		t.Fatalf("plan of a scale-up: %d %s", code, body)
	}
	// The rollout plan: the changed task replaces g[0] in one batch.
	code, body, resp = plan(changed)
	if rp := resp.RolloutPlan; code != 200 || len(rp) != 1 || rp[0].Group != "g" || rp[0].Batch != 1 ||
		len(rp[0].Allocs) != 1 || rp[0].Allocs[0] != "web.g[0]" || rp[0].PauseAfter != "" {
		t.Fatalf("rollout plan of a changed task: %d %s", code, body)
	}
	// An order naming a zone no node has is a warning, not an error.
	zoned := strings.Replace(changed, `"Count":1`, `"Count":1,"Update":{"MaxParallel":1,"Zones":{"Attribute":"${meta.zone}","Order":["nowhere"]}}`, 1)
	code, body, resp = plan(zoned)
	if code != 200 || !strings.Contains(resp.Warnings, `names zone "nowhere", which no node has`) {
		t.Fatalf("plan with an unknown zone in order: %d %s", code, body)
	}
	if a, _ := b.State().Snapshot().AllocsByJob(structs.DefaultNamespace, "web"); len(a) != 1 {
		t.Fatalf("plan wrote allocations: %d", len(a))
	}

	for _, c := range []struct{ body, text string }{
		{`{"Job":` + strings.Replace(same, `"ID":"web","Name":"web"`, `"ID":"api","Name":"api"`, 1) + `}`, "does not match"},
		{`{"Diff":true}`, "request has no job"},
		{`{"Job":{"ID":"web","Type":"nonsense"}}`, "invalid job"},
	} {
		if code, out, _ := do(t, "PUT", srv.URL+"/v1/job/web/plan", c.body); code != 400 || !strings.Contains(out, c.text) {
			t.Fatalf("plan %s: %d %q, want 400 with %q", c.body, code, out, c.text)
		}
	}
}
