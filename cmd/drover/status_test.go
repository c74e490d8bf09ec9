package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// seedRunning registers job id through the CLI and places n allocs in a
// deployment, the first running and healthy with task events.
func seedRunning(t *testing.T, c *cliCluster, id string, n int) ([]*structs.Allocation, *structs.Deployment) {
	t.Helper()
	if code, _, errOut := runBounded(t, "", "job", "run", "-detach", "-address", c.addr, writeJobFile(t, id, n, "/bin/sleep")); code != 0 {
		t.Fatalf("job run: %s", errOut)
	}
	e := c.waitPendingEval(id, structs.EvalTriggerJobRegister)
	allocs, d := c.place(e, n, true)
	healthy := true
	c.apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{{
		ID: allocs[0].ID, ClientStatus: structs.AllocClientStatusRunning, ClientDescription: "Tasks are running",
		DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: statetest.T0},
		TaskStates: map[string]*structs.TaskState{"server": {State: "running", StartedAt: statetest.T0, Events: []*structs.TaskEvent{
			{Type: "Received", Time: statetest.T0.UnixNano(), DisplayMessage: "Task received by client"},
			{Type: "Started", Time: statetest.T0.UnixNano() + 1e9, DisplayMessage: "Task started by client"},
		}}},
	}}, UpdatedAt: statetest.T0.UnixNano()})
	return allocs, d
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runBounded(t, "", args...)
	if code != 0 {
		t.Fatalf("%v: code %d\n%s\n%s", args, code, out, errOut)
	}
	return out
}

func wantAll(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestJobStatusListAndOne(t *testing.T) {
	c := newCLICluster(t)
	out := mustRun(t, "job", "status", "-address", c.addr)
	wantAll(t, out, "No running jobs")
	allocs, d := seedRunning(t, c, "web", 2)
	out = mustRun(t, "job", "status", "-address", c.addr)
	if f := strings.Fields(strings.Split(out, "\n")[1]); strings.Join(f, " ") != "web service 50 running 2026-01-02T03:04:05Z" {
		t.Fatalf("job list row %q:\n%s", f, out)
	}
	out = mustRun(t, "job", "status", "-address", c.addr, "we")
	t.Log(out)
	wantAll(t, out,
		"ID            = web", "Status        = running", "Submit Date   = 2026-01-02T03:04:05Z",
		"Task Group  Queued  Starting  Running  Failed  Complete  Lost  Unknown",
		"Latest Deployment", "ID          = "+d.ID[:8], "Description = Deployment is running",
		"Task Group  Auto Revert  Promoted  Desired",
		"ID        Node ID   Task Group  Version  Desired  Status   Created    Modified",
		allocs[0].ID[:8], "1m30s ago")
	sumRow := strings.Fields(strings.Split(out[strings.Index(out, "Task Group  Queued"):], "\n")[1])
	if strings.Join(sumRow, " ") != "web 0 1 1 0 0 0 0" {
		t.Fatalf("summary row %q", sumRow)
	}
	code, _, errOut := runBounded(t, "", "job", "status", "-address", c.addr, "nope")
	if code != 1 || !strings.Contains(errOut, `No job(s) with prefix or id "nope" found`) {
		t.Fatalf("unknown job: %d %s", code, errOut)
	}
}

func TestJobStopDetachMonitorAndPurge(t *testing.T) {
	c := newCLICluster(t)
	seedRunning(t, c, "web", 1)
	out := mustRun(t, "job", "stop", "-detach", "-address", c.addr, "web")
	if !strings.HasPrefix(out, "Evaluation ID: ") || !c.job("web").Stop {
		t.Fatalf("stop -detach: %s (stop=%v)", out, c.job("web").Stop)
	}
	complete := func() {
		if e := c.waitPendingEval("web", structs.EvalTriggerJobDeregister); e != nil {
			done := e.Copy()
			done.Status = structs.EvalStatusComplete
			c.apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}})
		}
	}
	complete() // the detached stop's evaluation
	go complete()
	out = mustRun(t, "job", "stop", "-purge", "-address", c.addr, "web")
	wantAll(t, out, `Monitoring evaluation "`, `finished with status "complete"`)
	if j, _ := c.b.State().Snapshot().JobByID("default", "web"); j != nil {
		t.Fatal("purged job is still stored")
	}
	code, _, errOut := runBounded(t, "", "job", "stop", "-address", c.addr, "web")
	if code != 1 || !strings.Contains(errOut, "No job(s)") {
		t.Fatalf("stop unknown: %d %s", code, errOut)
	}
}

func TestAllocStatusShowsTasksAndHealth(t *testing.T) {
	c := newCLICluster(t)
	allocs, d := seedRunning(t, c, "web", 2)
	out := mustRun(t, "alloc", "status", "-address", c.addr, allocs[0].ID[:8])
	t.Log(out)
	wantAll(t, out,
		"ID                  = "+allocs[0].ID, "Name                = web.web[0]",
		"Client Status       = running", "Client Description  = Tasks are running",
		"Deployment ID       = "+d.ID[:8], "Deployment Health   = healthy",
		`Task "server" is "running"`, "CPU      Memory   Disk", "100 MHz  300 MiB  300 MiB",
		"Started At     = 2026-01-02T03:04:05Z", "Recent Events:", "Task started by client")
	if strings.Index(out, "Task started by client") > strings.Index(out, "Task received by client") {
		t.Fatalf("events are not newest first:\n%s", out)
	}
	out = mustRun(t, "alloc", "status", "-address", c.addr, allocs[1].ID)
	wantAll(t, out, "Deployment Health   = unset", `Task "server" is "pending"`)
}

func TestPrefixesUnknownAndAmbiguous(t *testing.T) {
	c := newCLICluster(t)
	allocs, _ := seedRunning(t, c, "web", 2)
	// Two more allocs whose IDs share a prefix.
	job := c.job("web")
	var twins []*structs.Allocation
	for i, id := range []string{"abcd0001-0000-0000-0000-000000000000", "abcd0002-0000-0000-0000-000000000000"} {
		a := statetest.Alloc(job, c.node, allocs[0].EvalID, "", 5+i)
		a.ID = id
		twins = append(twins, a)
	}
	c.apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: allocs[0].EvalID, Job: job, AllocsPlaced: twins})
	code, out, _ := runBounded(t, "", "alloc", "status", "-address", c.addr, "abcd")
	if code != 1 || !strings.Contains(out, "Prefix matched multiple allocations") ||
		!strings.Contains(out, "abcd0001") || !strings.Contains(out, "abcd0002") {
		t.Fatalf("ambiguous prefix: code %d\n%s", code, out)
	}
	mustRun(t, "alloc", "status", "-address", c.addr, "abcd0002")
	code, _, errOut := runBounded(t, "", "alloc", "status", "-address", c.addr, "ffff")
	if code != 1 || !strings.Contains(errOut, `No allocation(s) with prefix or id "ffff" found`) {
		t.Fatalf("unknown alloc: %d %s", code, errOut)
	}
	code, _, errOut = runBounded(t, "", "eval", "status", "-address", c.addr, "ffff")
	if code != 1 || !strings.Contains(errOut, "No evaluation(s)") {
		t.Fatalf("unknown eval: %d %s", code, errOut)
	}
	code, _, errOut = runBounded(t, "", "node", "status", "-address", c.addr, "ffff")
	if code != 1 || !strings.Contains(errOut, "No node(s)") {
		t.Fatalf("unknown node: %d %s", code, errOut)
	}
}

func TestNodeStatusListAndOne(t *testing.T) {
	c := newCLICluster(t)
	allocs, _ := seedRunning(t, c, "web", 1)
	out := mustRun(t, "node", "status", "-address", c.addr)
	if f := strings.Fields(strings.Split(out, "\n")[1]); strings.Join(f, " ") != c.node.ID[:8]+" default dc1 n1 <none> false eligible ready" {
		t.Fatalf("node row %q", f)
	}
	out = mustRun(t, "node", "status", "-address", c.addr, c.node.ID[:6])
	t.Log(out)
	wantAll(t, out, "ID                 = "+c.node.ID, "Status             = ready", "Drivers            = raw_exec",
		"HTTP Addr          = 127.0.0.1:4646", "200/8000 MHz", allocs[0].ID[:8])
}

func TestEvalStatusExplainsPlacementFailures(t *testing.T) {
	c := newCLICluster(t)
	job := statetest.Job("big", 1)
	e := statetest.Eval("big", job)
	e.Status = structs.EvalStatusComplete
	e.BlockedEval = "b10cked0-0000-0000-0000-000000000000"
	e.QueuedAllocations = map[string]int{"web": 1}
	e.FailedTGAllocs = map[string]*structs.AllocationMetric{"web": {NodesEvaluated: 1, NodesExhausted: 1,
		DimensionExhausted: map[string]int{"cpu": 1}}}
	c.apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: e})
	out := mustRun(t, "eval", "status", "-address", c.addr, e.ID[:8])
	t.Log(out)
	wantAll(t, out, "ID                 = "+e.ID, "Placement Failures = true", "==> Failed Placements",
		`Task Group "web" (failed to place 1 allocation):`, `* Dimension "cpu" exhausted on 1 nodes`,
		`Evaluation "b10cked0" waiting for additional capacity`)
}

func TestAllocLogsReadsFromTheNode(t *testing.T) {
	c := newCLICluster(t)
	var gotQuery string
	nodeSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery = r.URL.RawQuery
		if !strings.HasPrefix(r.URL.Path, "/v1/client/fs/logs/") {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("type") == "stderr" {
			fmt.Fprint(w, "boom\n")
			return
		}
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(w, "line %d\n", i)
		}
	}))
	defer nodeSrv.Close()
	c.node.HTTPAddr = strings.TrimPrefix(nodeSrv.URL, "http://")
	c.apply(fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: c.node})
	allocs, _ := seedRunning(t, c, "web", 1)
	id := allocs[0].ID[:8]

	out := mustRun(t, "alloc", "logs", "-address", c.addr, id)
	if out != "line 1\nline 2\nline 3\nline 4\nline 5\n" || !strings.Contains(gotQuery, "task=server") ||
		!strings.Contains(gotQuery, "plain=true") || !strings.Contains(gotQuery, "follow=false") {
		t.Fatalf("logs %q, query %q", out, gotQuery)
	}
	if out := mustRun(t, "alloc", "logs", "-stderr", "-address", c.addr, id, "server"); out != "boom\n" {
		t.Fatalf("stderr %q", out)
	}
	if out := mustRun(t, "alloc", "logs", "-tail", "-n", "2", "-address", c.addr, id); out != "line 4\nline 5\n" {
		t.Fatalf("tail %q", out)
	}
	// A group with two tasks needs the task named.
	job := statetest.Job("two", 1)
	for _, tk := range job.TaskGroups[0].Tasks {
		tk.Services = nil
	}
	c.apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored := c.job("two")
	a := statetest.Alloc(stored, c.node, "", "", 0)
	c.apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Job: stored, AllocsPlaced: []*structs.Allocation{a}})
	code, _, errOut := runBounded(t, "", "alloc", "logs", "-address", c.addr, a.ID)
	if code != 1 || !strings.Contains(errOut, "Please specify the task") || !strings.Contains(errOut, "* sidecar") {
		t.Fatalf("two tasks: %d %s", code, errOut)
	}
}
