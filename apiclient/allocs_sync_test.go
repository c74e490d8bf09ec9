package apiclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/structs"
)

// AllocsSync sends its request in MessagePack, points the allocs sent
// without their job at the caller's copy, and reads a driver config's
// numbers as JSON gives them.
func TestAllocsSync(t *testing.T) {
	held := &structs.Job{ID: "web", Namespace: "default", Version: 2, JobModifyIndex: 9}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req allocsSyncRequest
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPut || r.URL.Path != "/v1/internal/node/n-1/allocs-sync" ||
			r.Header.Get("Content-Type") != wire.ContentType || wire.Decode(b, &req) != nil ||
			req.Since != 7 || len(req.HeldJobs) != 1 || req.HeldJobs[0] != held.Ref() || r.URL.Query().Get("index") != "7" {
			http.Error(w, "unexpected request "+r.URL.String(), http.StatusTeapot)
			return
		}
		own := &structs.Job{ID: "api", Namespace: "default", TaskGroups: []*structs.TaskGroup{{Name: "g",
			Tasks: []*structs.Task{{Name: "t", Config: map[string]any{"n": 3}}}}}}
		body, _ := wire.Encode(map[string]any{
			"Allocs":   map[string]uint64{"a": 8, "b": 8, "c": 3},
			"Changed":  []*structs.Allocation{{ID: "a", AllocModifyIndex: 8}, {ID: "b", Job: own, AllocModifyIndex: 8}},
			"FromHeld": map[string]int{"a": 0},
			"Index":    8,
		})
		w.Header().Set("Content-Type", wire.ContentType)
		w.Header().Set("X-Nomad-Index", "8")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	nc, err := NewNodeClient([]string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	got, meta, err := nc.AllocsSync(context.Background(), "n-1", 7, 0, []*structs.Job{held}, &QueryOptions{WaitIndex: 7})
	if err != nil {
		t.Fatal(err)
	}
	if meta.LastIndex != 8 || len(got.Allocs) != 3 || got.Allocs["c"] != 3 || len(got.Changed) != 2 {
		t.Fatalf("answer %+v (index %d)", got, meta.LastIndex)
	}
	if got.Changed[0].Job != held {
		t.Fatalf("alloc a's job %+v, want the held copy", got.Changed[0].Job)
	}
	if n := got.Changed[1].Job.TaskGroups[0].Tasks[0].Config["n"]; n != float64(3) {
		t.Fatalf("driver config number %T %v, want float64 3", n, n)
	}
}

// A server without the route answers 404: the call says so, and the next
// ones do without asking until Rebalance; other refusals are errors of
// their own.
func TestAllocsSyncOnAServerWithoutIt(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	nc, err := NewNodeClient([]string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, _, err := nc.AllocsSync(context.Background(), "n-1", 0, 0, nil, nil); !errors.Is(err, ErrSyncUnsupported) {
			t.Fatalf("call %d: %v, want ErrSyncUnsupported", i, err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	if f := nc.Fork(); f != nil {
		if _, _, err := f.AllocsSync(context.Background(), "n-1", 0, 0, nil, nil); !errors.Is(err, ErrSyncUnsupported) || calls.Load() != 1 {
			t.Fatalf("a fork asked again: %v", err)
		}
	}
	nc.Rebalance()
	if _, _, err := nc.AllocsSync(context.Background(), "n-1", 0, 0, nil, nil); !errors.Is(err, ErrSyncUnsupported) || calls.Load() != 2 {
		t.Fatalf("after Rebalance: %v, %d requests", err, calls.Load())
	}

	// A 403 is the answer, not a missing route.
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Permission denied", http.StatusForbidden)
	}))
	defer denied.Close()
	nc, err = NewNodeClient([]string{denied.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := nc.AllocsSync(context.Background(), "n-1", 0, 0, nil, nil); err == nil || errors.Is(err, ErrSyncUnsupported) {
		t.Fatalf("403: %v", err)
	}
}
