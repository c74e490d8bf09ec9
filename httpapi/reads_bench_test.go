package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// benchAPI stores one job with n allocations on one node.
func benchAPI(b *testing.B, n int) (*httptest.Server, []*structs.Allocation) {
	b.Helper()
	mb := NewMemBackend()
	ctx := context.Background()
	node := statetest.Node("n1")
	job := statetest.Job("web", n)
	eval := statetest.Eval("e", job)
	for _, step := range []struct {
		t   fsm.MessageType
		req any
	}{
		{fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node}},
		{fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval}},
	} {
		if _, _, err := mb.Apply(ctx, step.t, step.req); err != nil {
			b.Fatal(err)
		}
	}
	stored, _ := mb.State().Snapshot().JobByID("default", "web")
	allocs := make([]*structs.Allocation, n)
	for i := range allocs {
		allocs[i] = statetest.Alloc(stored, node, eval.ID, "", i)
	}
	if _, _, err := mb.Apply(ctx, fsm.ApplyPlanResultsRequestType,
		&structs.ApplyPlanResultsRequest{EvalID: eval.ID, Job: stored, AllocsPlaced: allocs}); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(New(mb, nil).Handler())
	b.Cleanup(srv.Close)
	return srv, allocs
}

func benchGet(b *testing.B, url string) { benchDo(b, http.MethodGet, url, "") }

// benchDo sends one request, reads the whole answer and fails the
// benchmark unless it is a 200.
func benchDo(b *testing.B, method, url, body string) {
	b.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("%s %s: %d", method, url, resp.StatusCode)
	}
}

// BenchmarkJobReads measures whole HTTP round trips over loopback for a
// job with 1000 allocations: its summary, its allocation stubs, one
// allocation by ID and a prefix lookup.
func BenchmarkJobReads(b *testing.B) {
	srv, allocs := benchAPI(b, 1000)
	for _, c := range []struct{ name, path string }{
		{"summary", "/v1/job/web/summary"},
		{"job-allocations", "/v1/job/web/allocations"},
		{"allocation", "/v1/allocation/" + allocs[500].ID},
		{"prefix", "/v1/allocations?prefix=" + allocs[500].ID[:6]},
	} {
		b.Run(fmt.Sprintf("%s/1000-allocs", c.name), func(b *testing.B) {
			for b.Loop() {
				benchGet(b, srv.URL+c.path)
			}
		})
	}
}
