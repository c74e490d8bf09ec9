package robustness

import (
	"context"
	"os/exec"
	"strconv"
	"sync"
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

// TestSmoke is the short form run by make test: each server cut off for
// 20 s in turn, a follower paused for 5 s, the leader killed and its
// links made lossy, while rollouts and the register workload run
// (smokeSchedule).
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	if !canPartition() {
		t.Skip("partitions need root and iptables")
	}
	runScenario(t, 0, smokeSchedule)
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
	runScenario(t, seed, randomSchedule(seed, *chaosDuration))
}

func runScenario(t *testing.T, seed int64, schedule []fault) {
	c := startCluster(t, true, "")
	c.seed = seed
	ctx := context.Background()
	l := c.waitLeader(60 * time.Second)
	if _, err := l.api().Jobs().Register(ctx, rollJob(t, 1)); err != nil {
		t.Fatalf("registering the rollout's job: %v", err)
	}
	waitDeployment(t, c, 0, 90*time.Second)

	h := &history{t0: time.Now()}
	wctx, stop := context.WithCancel(ctx)
	wg := workload(wctx, c, h, 250*time.Millisecond, t)
	// Rollouts run one after another through the faults: each new
	// version once the previous one's deployment is successful.
	rolls := &rollouts{}
	rdone := make(chan struct{})
	go func() { defer close(rdone); rolls.run(wctx, t, c) }()
	// The rollout's invariants are checked every second through the
	// faults.
	samples := &sampler{}
	sdone := make(chan struct{})
	go func() { defer close(sdone); samples.run(wctx, c) }()
	start := time.Now()
	windows := c.run(t, schedule)
	healed := time.Now()
	time.Sleep(3 * time.Second)
	stop()
	wg.Wait()
	<-rdone
	<-sdone

	c.waitLeader(60 * time.Second)
	lastVersion := rolls.registered()
	d := waitDeployment(t, c, lastVersion, 120*time.Second)
	t.Logf("rollouts: %d finished during the faults; version %d's finished %v after the last heal (deployment %s)",
		len(rolls.finishedAt()), lastVersion, time.Since(healed).Round(time.Second), d)
	// A partition that lasts well beyond the client's move to another
	// server (a heartbeat, then the 5 s hold) must not stop the rollout:
	// whichever server the client talked to, one rollout finishes while
	// it is cut off. Before the client left a server that cannot reach
	// the leader, the rollout waited for the whole partition.
	for _, w := range windows {
		if w.fault.Kind != "partition" || w.to.Sub(w.from) < 20*time.Second {
			continue
		}
		n := 0
		for _, at := range rolls.finishedAt() {
			if at.After(w.from) && at.Before(w.to) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no rollout finished during %s", w.fault)
		}
	}

	// A request sent to a server cut off from the leader ends within the
	// hold (5 s) and a little more: never a hang.
	for _, o := range h.slow(10*time.Second, windows) {
		t.Errorf("a request through %s took %v (write %v, error %q)", o.Server, time.Duration(o.Took).Round(time.Millisecond), o.Write, o.Err)
	}
	acked, attempted, reads, verdict := h.check(t, c.dir)
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
	for _, e := range c.crashed() {
		t.Errorf("%s", e)
	}
	// The rollout's invariants held at every sample; every deployment
	// ended in one terminal state; no version of the job was lost; and
	// with the workload stopped, the three servers' copies are identical.
	for _, v := range samples.violations {
		t.Errorf("rollout invariant: %s", v)
	}
	took, err := c.converge(90*time.Second, true)
	if err != nil {
		t.Errorf("at the end: %v", err)
	}
	ds, _, err := c.waitLeader(60*time.Second).api().Deployments().List(ctx, nil)
	if err != nil {
		t.Fatalf("deployments: %v", err)
	}
	for _, d := range ds {
		if !terminalStatus(d.Status) {
			t.Errorf("deployment %s of %s v%d ended %s", d.ID, d.JobID, d.JobVersion, d.Status)
		}
	}
	checkVersions(t, c, lastVersion)
	// What a client heard while a server's disk was full.
	for _, e := range h.errorsDuring(windows, "disk") {
		t.Logf("while a disk was full: %s", e)
	}
	kinds := map[string]int{}
	for _, f := range schedule {
		kinds[f.Kind]++
	}
	t.Logf("report: seed %d; %d faults %v over %v; writes: %d acknowledged of %d, none lost; reads: %d; last acknowledged value %d; %s; "+
		"rollouts: %d finished; %d samples of the rollout's invariants (fewest allocs serving: %d), %d violations; %d deployments, all terminal; converged after %d heals, identical at the end (%v)",
		c.seed, len(schedule), kinds, time.Since(start).Round(time.Second), acked, attempted, reads, last, verdict,
		len(rolls.finishedAt()), samples.samples, samples.minServing, len(samples.violations), len(ds), c.convergences, took.Round(100*time.Millisecond))
}

// rollouts registers job roll's versions one after another, each once the
// previous one's deployment is successful, and notes when each finished.
type rollouts struct {
	mu       sync.Mutex
	version  uint64 // the job version last registered (0: the first)
	finished []time.Time
	// via is the server asked first, the last one that answered: a
	// cut-off server takes the hold to say so, and the rollouts' own
	// pace should not depend on it.
	via int
}

func (r *rollouts) registered() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.version
}

func (r *rollouts) finishedAt() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.finished...)
}

func (r *rollouts) run(ctx context.Context, t *testing.T, c *cluster) {
	for ctx.Err() == nil {
		v := r.registered()
		// Register the next version through any server that takes it.
		rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		_, err := c.servers[r.via].api().Jobs().Register(rctx, rollJob(t, int(v)+2))
		cancel()
		if err != nil {
			r.via = (r.via + 1) % len(c.servers)
			sleepCtx(ctx, 200*time.Millisecond)
			continue
		}
		r.mu.Lock()
		r.version = v + 1
		r.mu.Unlock()
		for ctx.Err() == nil {
			if deploymentDone(c, v+1, &r.via) {
				r.mu.Lock()
				r.finished = append(r.finished, time.Now())
				r.mu.Unlock()
				break
			}
			sleepCtx(ctx, 500*time.Millisecond)
		}
	}
}

// deploymentDone reports whether job roll's version has a successful
// deployment, read from the leader through any server that reaches it (a
// cut-off one answers "No cluster leader").
func deploymentDone(c *cluster, version uint64, via *int) bool {
	for range c.servers {
		s := c.servers[*via]
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		ds, _, err := s.api().Deployments().List(ctx, nil)
		cancel()
		if err != nil {
			*via = (*via + 1) % len(c.servers)
			continue
		}
		for _, d := range ds {
			if d.JobID == "roll" && d.JobVersion == version && d.Status == "successful" {
				return true
			}
		}
		return false
	}
	return false
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
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
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
