package apiclient_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestReadsAndStopOverTheRealAPI(t *testing.T) {
	b := httpapi.NewMemBackend()
	srv := httptest.NewServer(httpapi.New(b, nil).Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := apiclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	node := statetest.Node("n1")
	if _, _, err := b.Apply(ctx, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node}); err != nil {
		t.Fatal(err)
	}
	job := statetest.Job("web", 1)
	for _, task := range job.TaskGroups[0].Tasks {
		task.Services = nil
		delete(task.Env, "PORT")
	}
	reg, err := c.Jobs().RegisterChecked(ctx, job, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Jobs().RegisterChecked(ctx, job, reg.JobModifyIndex+1); err == nil {
		t.Fatal("a stale check index was accepted")
	}
	eval, _, err := c.Evaluations().Info(ctx, reg.EvalID, nil)
	if err != nil || eval.JobID != "web" {
		t.Fatalf("eval %+v: %v", eval, err)
	}
	stored, _ := b.State().Snapshot().JobByID("default", "web")
	a := statetest.Alloc(stored, node, reg.EvalID, "", 0)
	if _, _, err := b.Apply(ctx, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: reg.EvalID, Job: stored, AllocsPlaced: []*structs.Allocation{a}}); err != nil {
		t.Fatal(err)
	}
	stubs, meta, err := c.Allocations().List(ctx, &apiclient.QueryOptions{Prefix: a.ID[:8]})
	if err != nil || len(stubs) != 1 || meta.LastIndex == 0 {
		t.Fatalf("allocs %+v %+v: %v", stubs, meta, err)
	}
	if got, _, err := c.Allocations().Info(ctx, a.ID, nil); err != nil || got.Job == nil {
		t.Fatalf("alloc %+v: %v", got, err)
	}
	if _, _, err := c.Allocations().Info(ctx, "nope", nil); !apiclient.IsNotFound(err) {
		t.Fatalf("unknown alloc: %v", err)
	}
	if n, _, err := c.Nodes().Info(ctx, node.ID, nil); err != nil || n.Name != "n1" {
		t.Fatalf("node %+v: %v", n, err)
	}
	if sum, _, err := c.Jobs().Summary(ctx, "web", nil); err != nil || sum.Summary["web"].Starting != 1 {
		t.Fatalf("summary %+v: %v", sum, err)
	}
	if js, _, err := c.Jobs().Allocations(ctx, "web", nil); err != nil || len(js) != 1 {
		t.Fatalf("job allocs %+v: %v", js, err)
	}
	if ev, _, err := c.Evaluations().Allocations(ctx, reg.EvalID, nil); err != nil || len(ev) != 1 {
		t.Fatalf("eval allocs %+v: %v", ev, err)
	}
	dr, err := c.Jobs().Deregister(ctx, "web", true)
	if err != nil || dr.EvalID == "" {
		t.Fatalf("purge %+v: %v", dr, err)
	}
	if _, _, err := c.Jobs().Info(ctx, "web", nil); !apiclient.IsNotFound(err) {
		t.Fatalf("purged job: %v", err)
	}
}

func TestAllocLogsStreamsPlainText(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/v1/client/fs/logs/a1" || q.Get("task") != "t" || q.Get("type") != "stderr" ||
			q.Get("plain") != "true" || q.Get("follow") != "false" {
			http.Error(w, "bad request "+r.URL.String(), 400)
			return
		}
		io.WriteString(w, "oops\n")
	}))
	defer srv.Close()
	c, _ := apiclient.New(srv.URL)
	rc, err := c.AllocLogs(context.Background(), "a1", apiclient.LogsOptions{Task: "t", Stderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	if string(b) != "oops\n" {
		t.Fatalf("logs %q", b)
	}
	if _, err := c.AllocLogs(context.Background(), "zz", apiclient.LogsOptions{Task: "t"}); err == nil {
		t.Fatal("a 400 answer was not an error")
	}
}
