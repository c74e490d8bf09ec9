package fsm

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// bigFSM holds one job with n allocs, each embedding the job.
func bigFSM(b *testing.B, n int) *FSM {
	f := New(nil)
	job := statetest.Job("web", n)
	applyOK(b, f, 1, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := snap(f).JobByID("default", "web")
	req := &structs.ApplyPlanResultsRequest{Job: stored}
	for k := range n {
		a := statetest.Alloc(stored, statetest.Node(fmt.Sprint(k%50)), "e", "", k)
		a.Job = nil
		req.AllocsPlaced = append(req.AllocsPlaced, a)
	}
	applyOK(b, f, 2, ApplyPlanResultsRequestType, req)
	return f
}

// BenchmarkSnapshotPersistRestore writes and restores a store of 10,000
// allocations.
func BenchmarkSnapshotPersistRestore(b *testing.B) {
	f := bigFSM(b, 10000)
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		s, _ := f.Snapshot()
		if err := s.(*fsmSnapshot).write(&buf); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
		if err := New(nil).Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "snapshot-bytes")
}

func FuzzRestore(f *testing.F) {
	g := New(nil)
	job := statetest.Job("web", 1)
	applyOK(f, g, 1, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: statetest.Eval("e", job)})
	var buf bytes.Buffer
	s, _ := g.Snapshot()
	if err := s.(*fsmSnapshot).write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Must not panic; a failed restore keeps the current store.
		h := New(nil)
		before := h.State()
		if err := h.Restore(nopCloser{bytes.NewReader(data)}); err != nil && h.State() != before {
			t.Fatal("failed restore replaced the store")
		}
	})
}
