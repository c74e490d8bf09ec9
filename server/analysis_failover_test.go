package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// raftServer is one server of a test cluster: real Raft over TCP on
// 127.0.0.1, its own state machine, and the leader's services, which run
// while it leads.
type raftServer struct {
	srv    *cluster.Server
	fsm    *fsm.FSM
	leader *Leader
	down   bool
}

// newRaftCluster starts n servers, bootstraps them together and waits for
// a leader whose services run; cfg adjusts each server's Config.
func newRaftCluster(t *testing.T, n int, cfg func(*Config)) []*raftServer {
	t.Helper()
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testWriter{t}})
	var out []*raftServer
	var peers []cluster.Peer
	for i := range n {
		f := fsm.New(logger)
		srv, err := cluster.New(cluster.Config{ID: fmt.Sprintf("s%d", i+1), RaftAddr: loopback.Addr(t), FSM: f,
			InMemory: true, Logger: logger.Named(fmt.Sprintf("raft-s%d", i+1))})
		must(t, err)
		c := Config{Raft: srv, State: f.State, Logger: logger.Named(fmt.Sprintf("s%d", i+1)), NumWorkers: 1,
			HeartbeatTTL: time.Minute, HeartbeatGrace: time.Minute}
		cfg(&c)
		l, err := New(c)
		must(t, err)
		srv.OnLeadership("scheduler", l.Run)
		rs := &raftServer{srv: srv, fsm: f, leader: l}
		t.Cleanup(func() {
			if !rs.down {
				_ = srv.Shutdown()
			}
		})
		out = append(out, rs)
		peers = append(peers, cluster.Peer{ID: srv.ID(), Address: srv.Addr(), Voter: true})
	}
	for _, s := range out {
		must(t, s.srv.Bootstrap(peers))
	}
	leaderOf(t, out)
	return out
}

// leaderOf waits for a running server whose leader services run.
func leaderOf(t *testing.T, servers []*raftServer) *raftServer {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		for _, s := range servers {
			if !s.down && s.srv.LeaderReady() {
				return s
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no leader")
	return nil
}

// waitState polls the state of a running server until cond holds.
func waitState(t *testing.T, servers []*raftServer, what string, cond func(s *state.Snapshot) bool) *state.Snapshot {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		s := leaderOf(t, servers).fsm.State().Snapshot()
		if cond(s) {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
	return nil
}

func markHealthyVia(t *testing.T, l *Leader, allocs []*structs.Allocation) {
	t.Helper()
	yes := true
	var updates []*structs.Allocation
	for _, a := range allocs {
		updates = append(updates, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: time.Now()}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := l.UpdateAllocsFromClient(ctx, updates); err != nil {
		t.Fatal(err)
	}
}

// A leader killed in the middle of an analysis run: the new leader,
// rebuilt from the replicated deployment, continues the run at the last
// measurement's time plus interval; no measurement is lost and none is
// taken twice (beyond the one the old leader may have had in flight, whose
// write is refused), and the run ends with exactly count measurements.
func TestAnalysisRunContinuesAfterLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("real Raft over TCP")
	}
	m := &fakeMeasurer{outcome: structs.AnalysisOutcomeSuccess}
	servers := newRaftCluster(t, 3, func(c *Config) { c.AnalysisMeasure = m.measure })
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()

	l := leaderOf(t, servers).leader
	for _, n := range []string{"a", "b"} {
		_, _, err := l.RegisterNode(ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	v0 := testJob("web", 2, 100)
	_, err := l.RegisterJob(ctx, v0)
	must(t, err)
	s := waitState(t, servers, "two v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	markHealthyVia(t, l, allocsOf(s, "web"))
	waitState(t, servers, "v0 successful", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 0)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful
	})

	const count = 5
	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	v1.TaskGroups[0].Update.Analyses = []*structs.Analysis{eachBatch(count, time.Second)}
	_, err = l.RegisterJob(ctx, v1)
	must(t, err)
	s = waitState(t, servers, "the first v1 alloc", func(s *state.Snapshot) bool { return len(byVersion(allocsOf(s, "web"), 1)) == 1 })
	markHealthyVia(t, l, byVersion(allocsOf(s, "web"), 1))
	waitState(t, servers, "two measurements", func(s *state.Snapshot) bool {
		r := runOf(s, 1, 0)
		return r != nil && r.Successes >= 2
	})

	old := leaderOf(t, servers)
	old.down = true
	must(t, old.srv.Shutdown())
	t.Logf("leader %s killed after %d measurements", old.srv.ID(), m.calls())

	s = waitState(t, servers, "the run successful under the new leader", func(s *state.Snapshot) bool {
		r := runOf(s, 1, 0)
		return r != nil && r.Phase == structs.AnalysisPhaseSuccessful
	})
	r := runOf(s, 1, 0)
	if r.Successes != count || len(r.Measurements) != count {
		t.Fatalf("run with %d successes and %d measurements, want %d", r.Successes, len(r.Measurements), count)
	}
	for i := 1; i < len(r.Measurements); i++ {
		if gap := r.Measurements[i].At.Sub(r.Measurements[i-1].At); gap < time.Second {
			t.Errorf("measurements %d and %d %v apart, under the interval", i-1, i, gap)
		}
	}
	if n := m.calls(); n > count+1 {
		t.Errorf("%d measurements taken for a run of %d: more than one doubled", n, count)
	}
	waitState(t, servers, "batch 2 placed by the new leader", func(s *state.Snapshot) bool {
		return len(byVersion(allocsOf(s, "web"), 1)) == 2
	})
}
