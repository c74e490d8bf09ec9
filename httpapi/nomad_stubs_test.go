package httpapi

import (
	"testing"

	nomad "github.com/hashicorp/nomad/api"
)

// The fields Nomad always fills in the answers the nomad CLI reads for
// job status|history|stop, deployment list|status, alloc status, node
// status and eval status, read through the official Go client: present
// and right, not only decodable.

// nomadClient is the official Go client for srv.
func nomadClient(t *testing.T, addr string) *nomad.Client {
	t.Helper()
	nc, err := nomad.NewClient(&nomad.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

func TestNomadJobListStubsCarryTheSummary(t *testing.T) {
	b, srv := newMemAPI(t)
	seedWeb(t, b)
	nc := nomadClient(t, srv.URL)

	// The nomad CLI resolves "we" by prefix and reads the first stub's
	// JobSummary.Namespace.
	for _, q := range []*nomad.QueryOptions{nil, {Prefix: "we"}} {
		stubs, meta, err := nc.Jobs().List(q)
		if err != nil || len(stubs) != 1 || meta.LastIndex == 0 {
			t.Fatalf("jobs list %+v: %v %+v", q, err, stubs)
		}
		s := stubs[0].JobSummary
		if s == nil {
			t.Fatalf("jobs list %+v: stub without JobSummary", q)
		}
		want := nomad.TaskGroupSummary{Queued: 1, Running: 1, Starting: 1}
		if s.JobID != "web" || s.Namespace != "default" || len(s.Summary) != 1 || s.Summary["web"] != want ||
			s.Children == nil || s.Children.Sum() != 0 ||
			s.CreateIndex != stubs[0].CreateIndex || s.ModifyIndex < stubs[0].ModifyIndex {
			t.Fatalf("jobs list %+v: summary %+v", q, s)
		}
	}
	// The list's index moves with the summaries: past every alloc update.
	_, meta, err := nc.Jobs().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if latest, _ := b.State().Snapshot().LatestIndex(); meta.LastIndex != latest {
		t.Fatalf("jobs list index %d, latest %d", meta.LastIndex, latest)
	}
}

// nomad node status <id> sums *Resources.CPU, MemoryMB and DiskMB of the
// node's running allocs; alloc status reads the same allocation.
func TestNomadAllocsCarryLegacyResources(t *testing.T) {
	b, srv := newMemAPI(t)
	s := seedWeb(t, b)
	nc := nomadClient(t, srv.URL)

	// Two tasks of 100 MHz and 300 MB each, 300 MB of shared disk.
	check := func(what string, a *nomad.Allocation) {
		t.Helper()
		r := a.Resources
		if r == nil || r.CPU == nil || r.MemoryMB == nil || r.MemoryMaxMB == nil || r.DiskMB == nil || r.Cores == nil || r.IOPS == nil {
			t.Fatalf("%s %s: resources %+v", what, a.ID, r)
		}
		if *r.CPU != 200 || *r.MemoryMB != 600 || *r.MemoryMaxMB != 600 || *r.DiskMB != 300 || *r.Cores != 0 || *r.IOPS != 0 {
			t.Fatalf("%s %s: cpu %d mem %d max %d disk %d", what, a.ID, *r.CPU, *r.MemoryMB, *r.MemoryMaxMB, *r.DiskMB)
		}
		// alloc status shows each task's share.
		if len(a.TaskResources) != 2 {
			t.Fatalf("%s %s: task resources %+v", what, a.ID, a.TaskResources)
		}
		for _, name := range []string{"server", "sidecar"} {
			tr := a.TaskResources[name]
			if tr == nil || tr.CPU == nil || tr.MemoryMB == nil || tr.MemoryMaxMB == nil ||
				*tr.CPU != 100 || *tr.MemoryMB != 300 || *tr.MemoryMaxMB != 0 {
				t.Fatalf("%s %s: task %s resources %+v", what, a.ID, name, tr)
			}
		}
	}
	allocs, _, err := nc.Nodes().Allocations(s.node.ID, nil)
	if err != nil || len(allocs) != 2 {
		t.Fatalf("node allocations: %v %d", err, len(allocs))
	}
	for _, a := range allocs {
		check("node allocation", a)
		if a.Job == nil || a.AllocatedResources == nil || a.TaskGroup != "web" {
			t.Fatalf("node allocation %+v", a)
		}
	}
	a, _, err := nc.Allocations().Info(s.allocs[0].ID, nil)
	if err != nil || a.ClientStatus != "running" {
		t.Fatalf("allocation: %v %+v", err, a)
	}
	check("allocation", a)
}
