package client

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/structs"
)

// TestSaveAllocWritesWhatItAlwaysWrote: alloc.json with the job's cached
// encoding is the same JSON object as the allocation encoded whole (the
// file earlier clients wrote and read), and reads back as the allocation.
func TestSaveAllocWritesWhatItAlwaysWrote(t *testing.T) {
	data := t.TempDir()
	jobs := NewJobCache()
	a := serviceAlloc("a1", "n", "dep", 3)
	a.Job.Meta = map[string]string{"owner": "<ops & co>"}
	a.Job = jobs.Share(a.Job)
	b := serviceAlloc("a2", "n", "dep", 3)
	b.Job = jobs.Share(b.Job) // the allocations of a version share one copy
	noJob := serviceAlloc("a3", "n", "", 0)
	noJob.Job = nil
	for _, alloc := range []*structs.Allocation{a, b, noJob} {
		dir := allocrunner.NewAllocDir(data, alloc.ID)
		if err := saveAlloc(dir, alloc, jobs); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir.Root, allocFile))
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(alloc)
		if err != nil {
			t.Fatal(err)
		}
		var gotObj, wantObj map[string]any
		if err := json.Unmarshal(got, &gotObj); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &wantObj); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotObj, wantObj) {
			t.Fatalf("%s: alloc.json\n%s\nwant the same object as\n%s", alloc.ID, got, want)
		}
		var back structs.Allocation
		if err := json.Unmarshal(got, &back); err != nil || back.ID != alloc.ID || (alloc.Job != nil) != (back.Job != nil) {
			t.Fatalf("%s read back as %+v, %v", alloc.ID, back, err)
		}
		if alloc.Job != nil && back.Job.Meta["owner"] != "<ops & co>" {
			t.Fatalf("job read back as %+v", back.Job)
		}
	}
}

// TestJobCacheEncodesTheSharedCopy: a job's encoding is kept for the
// cache's copy only (another copy, even of the same version, is encoded
// each time), and goes with the copy.
func TestJobCacheEncodesTheSharedCopy(t *testing.T) {
	c := NewJobCache()
	j := c.Share(serviceAlloc("a", "n", "", 1).Job)
	first, err := c.encode(j)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.encode(j); &first[0] != &again[0] {
		t.Fatal("the cached copy was encoded again")
	}
	other := serviceAlloc("a", "n", "", 1).Job
	other.Meta = map[string]string{"changed": "yes"}
	b, _ := c.encode(other)
	var back structs.Job
	if err := json.Unmarshal(b, &back); err != nil || back.Meta["changed"] != "yes" {
		t.Fatalf("another copy got %s, %v", b, err)
	}
	if again, _ := c.encode(j); &first[0] != &again[0] {
		t.Fatal("another copy's encoding replaced the cached copy's")
	}
	if b, err := (*JobCache)(nil).encode(j); err != nil || string(b) != string(first) {
		t.Fatalf("nil cache: %s, %v", b, err)
	}
	runtime.KeepAlive(j)
	j = nil
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		c.mu.Lock()
		n := len(c.encoded)
		c.mu.Unlock()
		if n == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the encoding outlived its job")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestHeldJobsFollowTheAllocs: the jobs the agent tells the servers it
// holds follow its allocs — a new alloc's job, an in-place update's new
// version, none once the alloc is collected — and the list is not built
// again while nothing changed.
func TestHeldJobsFollowTheAllocs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		refs := func() []structs.JobRef {
			var out []structs.JobRef
			for _, j := range a.heldJobs() {
				out = append(out, j.Ref())
			}
			return out
		}
		if held := refs(); len(held) != 0 {
			t.Fatalf("held %v before any alloc", held)
		}
		srv.put(serviceAlloc("a1", a.NodeID(), "", 0))
		time.Sleep(time.Second)
		synctest.Wait()
		if held, want := refs(), srv.alloc("a1").Job.Ref(); !slices.Equal(held, []structs.JobRef{want}) {
			t.Fatalf("held %v, want [%v]", held, want)
		}
		if first, again := a.heldJobs(), a.heldJobs(); &first[0] != &again[0] {
			t.Fatal("the list was built again with nothing changed")
		}
		srv.change("a1", func(x *structs.Allocation) {
			j := *x.Job
			j.Version, j.JobModifyIndex = 1, 50
			x.Job = &j
		})
		time.Sleep(time.Second)
		synctest.Wait()
		if held, want := refs(), srv.alloc("a1").Job.Ref(); want.Version != 1 || !slices.Equal(held, []structs.JobRef{want}) {
			t.Fatalf("held %v after the update in place, want [%v]", held, want)
		}
		srv.remove("a1")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if held := refs(); len(held) != 0 {
			t.Fatalf("held %v once the alloc was collected", held)
		}
	})
}
