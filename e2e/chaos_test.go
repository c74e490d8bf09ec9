package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// The chaos tests kill the leader of a real three-server cluster (SIGKILL
// of the process) while a rolling update of a count=10, max_parallel=2 job
// runs on a separate client process, and check what website/rollouts.md A.13 and
// the failover guarantees promise: a new leader is elected, the
// deployment completes, the servers agree, the killed server catches up
// when restarted, and throughout no alloc index runs twice and the
// serving allocs never drop below count - max_parallel.

const (
	chaosJob   = "chaos"
	chaosCount = 10
	chaosPar   = 2
)

func chaosSpec(version, minHealthy string) rolloutSpec {
	return rolloutSpec{ID: chaosJob, Count: chaosCount, Version: version, Update: fmt.Sprintf(`      max_parallel      = %d
      health_check      = "task_states"
      min_healthy_time  = %q
      healthy_deadline  = "1m"
      progress_deadline = "5m"`, chaosPar, minHealthy)}
}

// invariants samples the job's allocations (one consistent read through
// any running server, every 50ms) and keeps the worst it saw.
type invariants struct {
	c       *chaosCluster
	newVer  uint64
	stopCh  chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	samples int
	// twice names an alloc index that had two allocs wanted running and
	// not finished at once (empty if none).
	twice     string
	worstDown int
}

func sampleInvariants(c *chaosCluster, newVersion uint64) *invariants {
	s := &invariants{c: c, newVer: newVersion, stopCh: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *invariants) run() {
	defer close(s.done)
	for {
		select {
		case <-s.stopCh:
			return
		case <-time.After(50 * time.Millisecond):
		}
		up := s.c.up()
		if len(up) == 0 {
			continue
		}
		cx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		allocs, _, err := up[s.samples%len(up)].api().Jobs().Allocations(cx, chaosJob, nil)
		cancel()
		if err != nil {
			continue // no leader at this moment: nothing can change either
		}
		s.check(allocs)
	}
}

func (s *invariants) check(allocs []*structs.AllocationListStub) {
	live := map[string][]string{}
	serving := 0
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		if a.ClientStatus == structs.AllocClientStatusPending || a.ClientStatus == structs.AllocClientStatusRunning {
			live[a.Name] = append(live[a.Name], fmt.Sprintf("%s v%d %s", a.ID[:8], a.JobVersion, a.ClientStatus))
		}
		switch {
		case a.JobVersion < s.newVer && running(a):
			serving++
		case a.JobVersion == s.newVer && running(a) && healthy(a):
			serving++
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	s.worstDown = max(s.worstDown, chaosCount-serving)
	for name, l := range live {
		if len(l) > 1 && s.twice == "" {
			s.twice = fmt.Sprintf("%s: %s", name, strings.Join(l, ", "))
		}
	}
}

// stop ends the sampling and fails the test if an invariant broke.
func (s *invariants) stop(t testing.TB) {
	t.Helper()
	close(s.stopCh)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("%d samples; at most %d of %d allocs not serving", s.samples, s.worstDown, chaosCount)
	if s.samples < 10 {
		t.Fatalf("only %d samples", s.samples)
	}
	if s.twice != "" {
		t.Errorf("an alloc index ran twice at once: %s", s.twice)
	}
	if s.worstDown > chaosPar {
		t.Errorf("%d allocs out of service at once, more than max_parallel %d", s.worstDown, chaosPar)
	}
}

// endTasksUnder kills, when the test ends, every task process whose
// allocation directory lies under dir (the client's data directory),
// whatever state the cluster is in.
func endTasksUnder(t testing.TB, dir string) {
	t.Cleanup(func() {
		for id := range taskProcs() {
			if strings.HasPrefix(allocDirOf(id), dir+string(filepath.Separator)) {
				killAllocProcs(id)
			}
		}
	})
}

// allocDirOf is the NOMAD_ALLOC_DIR of the first process of an alloc.
func allocDirOf(allocID string) string {
	for _, pid := range taskProcs()[allocID] {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "NOMAD_ALLOC_DIR="); ok {
				return v
			}
		}
	}
	return ""
}

// rollToV0 registers the first version and waits for its deployment.
func rollToV0(t *testing.T, c *chaosCluster) {
	t.Helper()
	chaosSpec("1", "1s").run(t, c.api())
	waitRollout(t, c.api(), chaosJob, 0, structs.DeploymentStatusSuccessful, 2*time.Minute)
}

// placedOf counts the allocs of version v wanted running.
func placedOf(t testing.TB, c *chaosCluster, v uint64) (int, error) {
	allocs, err := jobAllocs(t, c.api(), chaosJob)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range allocs {
		if a.JobVersion == v && a.DesiredStatus == structs.AllocDesiredStatusRun {
			n++
		}
	}
	return n, nil
}

// waitRolloutPast waits until the deployment of version v is running with
// more than n of its allocs placed, and returns how many are.
func waitRolloutPast(t testing.TB, c *chaosCluster, v uint64, n int) int {
	t.Helper()
	var placed int
	eventually(t, 2*time.Minute, fmt.Sprintf("more than %d allocs of v%d placed", n, v), func() error {
		d, err := latestDeployment(t, c.api(), chaosJob)
		if err != nil {
			return err
		}
		if d.JobVersion != v || d.Status != structs.DeploymentStatusRunning {
			return fmt.Errorf("deployment v%d %s (%s)", d.JobVersion, d.Status, d.StatusDescription)
		}
		if placed, err = placedOf(t, c, v); err != nil {
			return err
		}
		if placed <= n {
			return fmt.Errorf("%d placed", placed)
		}
		return nil
	})
	return placed
}

func chaosCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four agent processes and kills servers")
	}
}

func TestChaosLeaderKillDuringRollout(t *testing.T) {
	chaosCheck(t)
	c := startChaosCluster(t)
	rollToV0(t, c)

	inv := sampleInvariants(c, 1)
	chaosSpec("2", "1s").run(t, c.api())
	waitRolloutPast(t, c, 1, 0)
	killed := c.killLeader()
	survivors := c.up()
	leader := c.waitLeader(survivors)
	if leader == killed {
		t.Fatalf("%s still leads after SIGKILL", killed.name)
	}
	t.Logf("new leader %s", leader.name)

	waitRollout(t, c.api(), chaosJob, 1, structs.DeploymentStatusSuccessful, 2*time.Minute)
	inv.stop(t)
	view := waitAgree(t, survivors, chaosJob, "v1 stable=true")
	if !strings.HasSuffix(view, structs.DeploymentStatusSuccessful) {
		t.Fatalf("survivors hold %q", view)
	}

	c.start(killed)
	waitAgree(t, c.servers, chaosJob, view)
	if n := countAllocs(allocsOf(t, c.api(), chaosJob), 1, running); n != chaosCount {
		t.Errorf("%d allocs of v1 running, want %d", n, chaosCount)
	}
	assertNodeReady(t, c)
}

func TestChaosThreeLeaderKillsInOneRollout(t *testing.T) {
	chaosCheck(t)
	c := startChaosCluster(t)
	rollToV0(t, c)

	inv := sampleInvariants(c, 1)
	// A longer min_healthy_time keeps the rollout going through three
	// kills and restarts.
	chaosSpec("2", "3s").run(t, c.api())
	placed := 0
	for k := 1; k <= 3; k++ {
		placed = waitRolloutPast(t, c, 1, placed)
		killed := c.killLeader()
		leader := c.waitLeader(c.up())
		t.Logf("kill %d: %s killed with %d allocs of v1 placed; %s leads", k, killed.name, placed, leader.name)
		c.start(killed)
		c.waitLeader(c.servers)
	}
	waitRollout(t, c.api(), chaosJob, 1, structs.DeploymentStatusSuccessful, 3*time.Minute)
	inv.stop(t)
	view := waitAgree(t, c.servers, chaosJob, "v1 stable=true")
	if !strings.HasSuffix(view, structs.DeploymentStatusSuccessful) {
		t.Fatalf("servers hold %q", view)
	}
	assertNodeReady(t, c)
}

// assertNodeReady checks that the client's node was never taken down:
// it is ready and no alloc of the job was lost.
func assertNodeReady(t *testing.T, c *chaosCluster) {
	t.Helper()
	nodes, _, err := c.api().Nodes().List(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0].Status != structs.NodeStatusReady {
		t.Errorf("nodes %s, want one ready", jsonString(nodes))
	}
	for _, a := range allocsOf(t, c.api(), chaosJob) {
		if a.ClientStatus == structs.AllocClientStatusLost {
			t.Errorf("alloc %s lost", a.ID)
		}
	}
}
