package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// BenchmarkFailoverSIGKILL measures, per run on a fresh three-process
// cluster, the time from SIGKILL of the leader to a job write acknowledged
// by the survivors, and reports the median and worst (use -benchtime=Nx).
func BenchmarkFailoverSIGKILL(b *testing.B) {
	var took []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		servers := startCluster(b)
		leader := waitAgreedLeader(b, servers)
		acked := map[string]bool{}
		register(b, leader, "before", acked)
		var survivor *server
		for _, s := range servers {
			if s != leader {
				survivor = s
			}
		}
		b.StartTimer()
		start := time.Now()
		leader.kill()
		for {
			if _, err := survivor.client().Jobs().Register(ctx(b), jobJSON(fmt.Sprint("after-", i))); err == nil {
				break
			}
			if time.Since(start) > 30*time.Second {
				b.Fatal("no write accepted within 30s of the leader's death")
			}
			time.Sleep(5 * time.Millisecond)
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		for _, s := range servers {
			s.kill()
		}
	}
	reportDurations(b, "", took)
}

// BenchmarkFailoverElection measures the time from SIGKILL of the leader
// to both survivors naming the same new leader, over b.N kills of one
// cluster (each killed server is restarted and rejoins before the next
// kill; run with -benchtime=20x or more for the figures).
func BenchmarkFailoverElection(b *testing.B) {
	c := startChaosCluster(b)
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		leader := c.waitLeader(c.servers)
		b.StartTimer()
		start := time.Now()
		c.kill(leader)
		took = append(took, waitNewLeader(b, c, leader, start))
		b.StopTimer()
		c.start(leader)
	}
	c.waitLeader(c.servers)
	reportDurations(b, "", took)
}

// waitNewLeader polls the running servers every 2ms until they agree on
// a leader other than old, and returns the time since start.
func waitNewLeader(b *testing.B, c *chaosCluster, old *chaosServer, start time.Time) time.Duration {
	for {
		if l, err := c.leaderOf(c.up()); err == nil && l != old {
			return time.Since(start)
		}
		if time.Since(start) > 30*time.Second {
			b.Fatal("no new leader within 30s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// BenchmarkFailoverRolloutResume measures, per run, how soon a rolling
// update moves again after its leader is killed: a new version of a
// count=10, max_parallel=2 job with manual health places two allocs;
// the leader is killed; once a new leader is elected the two allocs are
// marked healthy through a survivor (retrying until it accepts), and the
// time until the next allocs are placed is taken. Reported: election
// (kill → new leader), resume (new leader → next allocs placed) and
// accept (new leader → health write accepted), median and worst.
func BenchmarkFailoverRolloutResume(b *testing.B) {
	c := startChaosCluster(b)
	spec := rolloutSpec{ID: chaosJob, Count: chaosCount, Version: "0", Update: fmt.Sprintf(`      max_parallel      = %d
      health_check      = "manual"
      healthy_deadline  = "5m"
      progress_deadline = "10m"`, chaosPar)}
	spec.run(b, c.api())
	// The first version: mark everything healthy to finish it.
	d := waitPlaced(b, c, 0, chaosCount)
	markHealthy(b, c, d, 0)
	waitRollout(b, c.api(), chaosJob, 0, structs.DeploymentStatusSuccessful, time.Minute)
	var election, accept, resume []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		version := uint64(i + 1)
		spec.Version = fmt.Sprint(version)
		spec.run(b, c.api())
		d = waitPlaced(b, c, version, chaosPar)
		leader := c.waitLeader(c.servers)
		b.StartTimer()
		start := time.Now()
		c.kill(leader)
		el := waitNewLeader(b, c, leader, start)
		elected := time.Now()
		for {
			if err := setHealthy(c, d, version); err == nil {
				break
			}
			if time.Since(elected) > 30*time.Second {
				b.Fatal("health write not accepted within 30s of the election")
			}
			time.Sleep(2 * time.Millisecond)
		}
		acc := time.Since(elected)
		for {
			if n, err := placedOf(b, c, version); err == nil && n > chaosPar {
				break
			}
			if time.Since(elected) > 30*time.Second {
				b.Fatal("no further placement within 30s of the election")
			}
			time.Sleep(2 * time.Millisecond)
		}
		b.StopTimer()
		election, accept, resume = append(election, el), append(accept, acc), append(resume, time.Since(elected))
		c.start(leader)
		c.waitLeader(c.servers)
	}
	if len(election) > 0 {
		reportDurations(b, "election-", election)
		reportDurations(b, "accept-", accept)
		reportDurations(b, "resume-", resume)
	}
}

// waitPlaced waits until version's deployment has at least n allocs
// placed and returns the deployment's ID.
func waitPlaced(b *testing.B, c *chaosCluster, version uint64, n int) string {
	var id string
	eventually(b, time.Minute, fmt.Sprintf("%d allocs of v%d", n, version), func() error {
		d, err := latestDeployment(b, c.api(), chaosJob)
		if err != nil {
			return err
		}
		if d.JobVersion != version {
			return fmt.Errorf("latest deployment is of v%d", d.JobVersion)
		}
		placed, err := placedOf(b, c, version)
		if err != nil {
			return err
		}
		if placed < n {
			return fmt.Errorf("%d placed", placed)
		}
		id = d.ID
		return nil
	})
	return id
}

func markHealthy(b *testing.B, c *chaosCluster, deploymentID string, version uint64) {
	eventually(b, 30*time.Second, "marking allocs healthy", func() error { return setHealthy(c, deploymentID, version) })
}

// setHealthy marks every placed alloc of version that is not yet healthy
// as healthy.
func setHealthy(c *chaosCluster, deploymentID string, version uint64) error {
	cx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	up := c.up()
	if len(up) == 0 {
		return fmt.Errorf("no server up")
	}
	api := up[0].api()
	allocs, _, err := api.Jobs().Allocations(cx, chaosJob, nil)
	if err != nil {
		return err
	}
	var ids []string
	for _, a := range allocs {
		if a.JobVersion == version && a.DesiredStatus == structs.AllocDesiredStatusRun && !healthy(a) {
			ids = append(ids, a.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err = api.Deployments().SetAllocHealth(cx, deploymentID, ids, nil)
	return err
}

// reportDurations reports the median and worst of took as
// <prefix>p50-ms and <prefix>max-ms.
func reportDurations(b *testing.B, prefix string, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, prefix+"p50-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, prefix+"max-ms")
}
