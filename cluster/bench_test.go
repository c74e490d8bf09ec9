package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/internal/loopback"
)

// newTCPCluster starts n servers over real loopback TCP with bolt files,
// bootstrapped together, and returns them once a leader is ready.
func newTCPCluster(tb testing.TB, n int, noSync bool) []*testNode {
	tb.Helper()
	dir := tb.TempDir()
	nodes := make([]*testNode, n)
	var peers []Peer
	for i := range nodes {
		f := &listFSM{}
		srv, err := New(Config{
			DataDir: filepath.Join(dir, fmt.Sprint(i)), RaftAddr: loopback.Addr(tb), FSM: f,
			Logger: quietLogger(tb), NoSync: noSync,
		})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = srv.Shutdown() })
		nodes[i] = &testNode{srv: srv, fsm: f}
		peers = append(peers, Peer{ID: srv.ID(), Address: srv.Addr(), Voter: true})
	}
	for _, nd := range nodes {
		if err := nd.srv.Bootstrap(peers); err != nil {
			tb.Fatal(err)
		}
	}
	waitLeader(tb, nodes)
	return nodes
}

// quietLogger keeps benchmark output to the figures.
func quietLogger(tb testing.TB) hclog.Logger {
	if _, bench := tb.(*testing.B); bench {
		return hclog.NewNullLogger()
	}
	return testLogger(tb)
}

// entry is a write of a realistic small size (an eval update is ~300 B).
var entry = make([]byte, 300)

func benchApply(b *testing.B, writers int, noSync bool) {
	nodes := newTCPCluster(b, 3, noSync)
	leader := waitLeader(b, nodes)
	ctx := context.Background()
	var next atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, _, err := leader.srv.ApplyBytes(ctx, entry); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
}

// BenchmarkApply measures committed writes per second on a three-server
// cluster over loopback TCP with bolt files, by concurrent writers, with
// and without fsync.
func BenchmarkApply(b *testing.B) {
	for _, sync := range []bool{true, false} {
		for _, writers := range []int{1, 64} {
			name := fmt.Sprintf("writers=%d/fsync=%t", writers, sync)
			b.Run(name, func(b *testing.B) { benchApply(b, writers, !sync) })
		}
	}
}

// BenchmarkFailover measures, per run, the time from the leader's shutdown
// to a write accepted by a new leader, and reports the median and the
// worst over b.N runs (use -benchtime=Nx).
func BenchmarkFailover(b *testing.B) {
	var took []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		nodes := newTCPCluster(b, 3, false)
		leader := waitLeader(b, nodes)
		if _, _, err := leader.srv.ApplyBytes(context.Background(), entry); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := leader.srv.Shutdown(); err != nil {
			b.Fatal(err)
		}
		for done := false; !done; {
			if time.Since(start) > 30*time.Second {
				b.Fatal("no new leader within 30s")
			}
			for _, nd := range nodes {
				if nd == leader || !nd.srv.IsLeader() {
					continue
				}
				if _, _, err := nd.srv.ApplyBytes(context.Background(), entry); err == nil {
					done = true
					break
				}
			}
			if !done {
				time.Sleep(2 * time.Millisecond)
			}
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		for _, nd := range nodes {
			_ = nd.srv.Shutdown()
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "max-ms")
}
