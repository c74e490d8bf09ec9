package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestJobsListWakesOnlyOnSummaryChanges: GET /v1/jobs as a blocking
// query watches the jobs and their kept summaries, not the allocations
// and evaluations they count: a health report, a client report with no
// new status and a newer evaluation with the same queued counts leave it
// asleep; an allocation that starts running wakes it, and the answer
// counts it.
func TestJobsListWakesOnlyOnSummaryChanges(t *testing.T) {
	b, srv := newMemAPI(t)
	seed := seedWeb(t, b)
	q := jobsListQuery(QueryOptions{Namespace: "default"})
	ws := memdb.NewWatchSet()
	_, idx, err := q(ws, b.State().Snapshot().WithWatch(ws))
	if err != nil {
		t.Fatal(err)
	}
	fired := func() bool {
		for ch := range ws {
			select {
			case <-ch:
				return true
			default:
			}
		}
		return false
	}
	a0, a1 := seed.allocs[0], seed.allocs[1]
	mustApply(t, b, fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: a0.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: statetest.Bool(true), Timestamp: statetest.T0}}},
		UpdatedAt: statetest.T0.UnixNano(),
	})
	mustApply(t, b, fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs:    []*structs.Allocation{{ID: a1.ID, ClientStatus: structs.AllocClientStatusPending, ClientDescription: "pulling"}},
		UpdatedAt: statetest.T0.UnixNano(),
	})
	again := statetest.Eval("web-2", seed.job)
	again.Status, again.QueuedAllocations = structs.EvalStatusComplete, map[string]int{"web": 1}
	mustApply(t, b, fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{again}})
	if fired() {
		t.Fatal("writes that change no summary woke the jobs list")
	}

	// Over HTTP: a query at the list's index answers once a1 runs.
	type answer struct {
		stubs []*structs.JobListStub
		index string
		err   error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("%s/v1/jobs?index=%d&wait=5m", srv.URL, idx))
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		var a answer
		a.index = resp.Header.Get("X-Nomad-Index")
		a.err = json.NewDecoder(resp.Body).Decode(&a.stubs)
		got <- a
	}()
	wake := mustApply(t, b, fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs:    []*structs.Allocation{{ID: a1.ID, ClientStatus: structs.AllocClientStatusRunning}},
		UpdatedAt: statetest.T0.UnixNano(),
	})
	if !fired() {
		t.Fatal("an allocation now running did not wake the jobs list")
	}
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	want := structs.TaskGroupSummary{Queued: 1, Running: 2}
	if len(a.stubs) != 1 || a.stubs[0].JobSummary.Summary["web"] != want || a.index != fmt.Sprint(wake) {
		t.Fatalf("answer at index %s (want %d): %+v", a.index, wake, a.stubs)
	}
}
