package client

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestJobCacheSharesOneCopyPerVersion(t *testing.T) {
	c := NewJobCache()
	job := func(ns, id string, version, modify uint64) *structs.Job {
		return &structs.Job{Namespace: ns, ID: id, Version: version, JobModifyIndex: modify}
	}
	first := c.Share(job("default", "web", 1, 10))
	keep := []*structs.Job{first}
	if got := c.Share(job("default", "web", 1, 10)); got != first {
		t.Fatal("an equal version got a copy of its own")
	}
	for _, other := range []*structs.Job{
		job("default", "web", 2, 10),
		job("default", "web", 1, 11),
		job("prod", "web", 1, 10),
		job("default", "api", 1, 10),
	} {
		if got := c.Share(other); got != other {
			t.Errorf("%+v was given another version's copy", other)
		}
		keep = append(keep, other)
	}
	if c.Share(nil) != nil {
		t.Error("nil job became a job")
	}
	var none *JobCache
	if j := job("default", "web", 1, 10); none.Share(j) != j {
		t.Error("a nil cache changed the job")
	}
	if n := c.Len(); n != 5 {
		t.Errorf("%d entries, want 5", n)
	}
	runtime.KeepAlive(keep)
}

func TestJobCacheForgetsCollectedJobs(t *testing.T) {
	c := NewJobCache()
	c.Share(&structs.Job{ID: "web", Version: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for c.Len() > 0 {
		if ctx.Err() != nil {
			t.Fatalf("entry still there after the job became unreachable (%d)", c.Len())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	// A new copy of the same version is cached afresh.
	j := &structs.Job{ID: "web", Version: 1}
	if c.Share(j) != j {
		t.Error("a collected copy was handed out")
	}
}

func TestShareJobsPointsAllocsAtOneCopy(t *testing.T) {
	c := NewJobCache()
	allocs := []*structs.Allocation{
		{ID: "a1", Job: &structs.Job{ID: "web", Version: 3, JobModifyIndex: 7}},
		nil,
		{ID: "a2", Job: &structs.Job{ID: "web", Version: 3, JobModifyIndex: 7}},
		{ID: "a3"},
	}
	c.shareJobs(allocs)
	if allocs[0].Job != allocs[2].Job {
		t.Error("two allocs of one job version hold two copies")
	}
	if allocs[3].Job != nil {
		t.Error("an alloc without a job got one")
	}
}
