package robustness

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
)

// canPartition reports whether this run can cut servers off: root, with
// iptables' owner match.
func canPartition() bool {
	_, err := exec.LookPath("iptables")
	return err == nil && exec.Command("iptables", "-L", "OUTPUT", "-n").Run() == nil
}

// TestSmoke is the short form run by make test: a follower and the
// leader each cut off for 10 s, a follower paused for 5 s and the leader
// killed, while a rollout and the register workload run.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	if !canPartition() {
		t.Skip("partitions need root and iptables")
	}
	runScenario(t, smokeSchedule)
}

// TestChaos is the long form (make chaos): faults drawn from a seed for
// -chaos.duration.
func TestChaos(t *testing.T) {
	if *chaosDuration == 0 {
		t.Skip("run with -chaos.duration (make chaos)")
	}
	if !canPartition() {
		t.Skip("partitions need root and iptables")
	}
	seed := *chaosSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (replay with -chaos.seed %d)", seed, seed)
	runScenario(t, randomSchedule(seed, *chaosDuration))
}

func runScenario(t *testing.T, schedule []fault) {
	c := startCluster(t, true)
	ctx := context.Background()
	l := c.waitLeader(60 * time.Second)
	if _, err := l.api().Jobs().Register(ctx, rollJob(t, 1)); err != nil {
		t.Fatalf("registering the rollout's job: %v", err)
	}
	waitDeployment(t, c, 0, 90*time.Second)

	h := &history{t0: time.Now()}
	wctx, stop := context.WithCancel(ctx)
	wg := workload(wctx, c, h, 250*time.Millisecond, t)
	// The next version's rollout runs through the faults.
	go func() {
		for i := 0; wctx.Err() == nil; i++ {
			rctx, cancel := context.WithTimeout(wctx, 15*time.Second)
			_, err := c.servers[i%3].api().Jobs().Register(rctx, rollJob(t, 2))
			cancel()
			if err == nil {
				return
			}
			sleepCtx(wctx, time.Second)
		}
	}()
	start := time.Now()
	c.run(t, schedule)
	healed := time.Now()
	time.Sleep(3 * time.Second)
	stop()
	wg.Wait()

	c.waitLeader(60 * time.Second)
	d := waitDeployment(t, c, 1, 120*time.Second)
	t.Logf("rollout of version 2 finished %v after the last heal (deployment %s)", time.Since(healed).Round(time.Second), d)

	acked, attempted, reads := h.check(t, c.dir)
	last := h.lastAcked()
	// No acknowledged write lost: every server holds a value at least as
	// new as the last acknowledged write (the writer is sequential).
	for _, s := range c.servers {
		waitFor(t, 30*time.Second, s.name+" holds the last acknowledged write", func() bool {
			job, _, err := s.api().Jobs().Info(ctx, "reg", &apiclient.QueryOptions{AllowStale: true})
			if err != nil {
				return false
			}
			v, _ := strconv.Atoi(job.Meta["v"])
			return v >= last
		})
	}
	t.Logf("%d faults over %v; writes: %d acknowledged of %d; reads: %d; last acknowledged value %d; linearizability checked",
		len(schedule), time.Since(start).Round(time.Second), acked, attempted, reads, last)
}

// waitDeployment waits until the deployment of job roll's version (0 for
// the first registration) is successful on the leader, and returns its ID
// and status.
func waitDeployment(t *testing.T, c *cluster, version uint64, d time.Duration) string {
	t.Helper()
	var id, status string
	waitFor(t, d, "the rollout of version "+strconv.FormatUint(version, 10), func() bool {
		l := c.leader()
		if l == nil {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ds, _, err := l.api().Deployments().List(ctx, nil)
		if err != nil {
			return false
		}
		for _, dep := range ds {
			if dep.JobID == "roll" && dep.JobVersion == version {
				id, status = dep.ID, dep.Status
				if status == "successful" {
					return true
				}
			}
		}
		return false
	})
	return id + " " + status
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok() {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s", d, what)
}
