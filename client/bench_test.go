package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// allRunning blocks until every alloc of srv reports running, or the
// deadline.
func allRunning(b *testing.B, srv *fakeServer, n int) {
	deadline := time.After(60 * time.Second)
	for {
		srv.mu.Lock()
		running := 0
		for _, a := range srv.allocs {
			if a.ClientStatus == structs.AllocClientStatusRunning {
				running++
			}
		}
		ch := srv.changed
		srv.mu.Unlock()
		if running == n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			b.Fatalf("%d of %d allocs running", running, n)
		}
	}
}

// BenchmarkPlaceToRunningReported measures one client agent taking a
// batch of mock-driver allocations from the servers' answer to every one
// reported running (in-memory servers, real clock, real alloc dirs).
func BenchmarkPlaceToRunningReported(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("allocs=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				srv := newFakeServer()
				a, err := New(Config{DataDir: b.TempDir(), NodeName: "bench", ServerAPI: srv,
					Logger: hclog.NewNullLogger(), Drivers: []drivers.Driver{mock.New(mock.Options{})}})
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan struct{})
				go func() { a.Run(context.Background()); close(done) }()
				for !a.Registered() {
					time.Sleep(time.Millisecond)
				}
				b.StartTimer()
				for j := range n {
					srv.put(serviceAlloc(fmt.Sprintf("a-%04d", j), a.NodeID(), "", 0))
				}
				allRunning(b, srv, n)
				b.StopTimer()
				srv.mu.Lock()
				sends := len(srv.updates)
				srv.mu.Unlock()
				b.ReportMetric(float64(sends), "sends/op")
				a.Shutdown(true)
				<-done
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "allocs/s")
		})
	}
}

// BenchmarkSaveAlloc measures writing alloc.json for a new allocation of
// a job version already saved (jobs: the job's encoding kept by the
// JobCache) and with the job encoded each time (no jobs).
func BenchmarkSaveAlloc(b *testing.B) {
	for _, cached := range []bool{true, false} {
		b.Run(fmt.Sprintf("jobs=%v", cached), func(b *testing.B) {
			var jobs *JobCache
			alloc := serviceAlloc("a", "n", "dep", 1)
			if cached {
				jobs = NewJobCache()
				alloc.Job = jobs.Share(alloc.Job)
			}
			dir := allocrunner.NewAllocDir(b.TempDir(), alloc.ID)
			b.ReportAllocs()
			for b.Loop() {
				if err := saveAlloc(dir, alloc, jobs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
