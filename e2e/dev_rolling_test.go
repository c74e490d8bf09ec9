package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// TestDevAgentRollsAJobOutWithRealProcesses runs `drover agent -dev`,
// registers examples/rolling.hcl, checks that its four tasks really run,
// rolls out a second version (two at a time) and stops the agent with
// SIGINT: no task process may survive it.
func TestDevAgentRollsAJobOutWithRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes for tens of seconds")
	}
	p := startDevAgent(t)
	c := p.client()

	first := runRollingExample(t, c)

	// Version 1: a new environment (destructive), a short min_healthy_time.
	v1 := parseJob(t, "testdata/rolling.hcl", "version=2")
	maxParallel := v1.TaskGroups[0].Update.MaxParallel
	s := startSampler(t, c, v1.ID, 1)
	registerJob(t, c, v1)
	eventually(t, 90*time.Second, "the deployment of version 1 to succeed", func() error {
		d, err := latestDeployment(t, c, v1.ID)
		if err != nil {
			return err
		}
		if d.JobVersion != 1 || d.Status != structs.DeploymentStatusSuccessful {
			return fmt.Errorf("deployment v%d %s: %s", d.JobVersion, d.Status, d.StatusDescription)
		}
		return nil
	})
	worst, samples := s.stop()
	t.Logf("%d samples; at most %d allocs of version 1 not yet healthy at once", samples, worst)
	if samples == 0 {
		t.Fatal("the sampler saw nothing")
	}
	if worst > maxParallel {
		t.Errorf("%d allocs replaced at once, max_parallel is %d", worst, maxParallel)
	}

	var second []string
	eventually(t, 30*time.Second, "the new allocs running and the old processes gone", func() error {
		allocs, err := jobAllocs(t, c, v1.ID)
		if err != nil {
			return err
		}
		second = runningAllocs(allocs, 1)
		if len(second) != 4 {
			return fmt.Errorf("%d of version 1 running", len(second))
		}
		procs := taskProcs()
		for _, id := range first {
			if len(procs[id]) > 0 {
				return fmt.Errorf("old alloc %s still has processes %v", id, procs[id])
			}
		}
		return allHaveProcesses(second)
	})

	if code := p.interrupt(); code != 0 {
		t.Fatalf("agent exited %d after SIGINT", code)
	}
	procs := taskProcs()
	for _, id := range append(first, second...) {
		if len(procs[id]) > 0 {
			t.Errorf("alloc %s's processes %v survived the agent", id, procs[id])
		}
	}
}

// runRollingExample registers examples/rolling.hcl and waits until its
// four allocs of version 0 run, each with a live process; it returns their
// IDs.
func runRollingExample(t *testing.T, c *apiclient.Client) []string {
	t.Helper()
	v0 := parseJob(t, "../examples/rolling.hcl")
	registerJob(t, c, v0)
	var first []string
	eventually(t, 60*time.Second, "four running allocs of version 0, each with a live process", func() error {
		allocs, err := jobAllocs(t, c, v0.ID)
		if err != nil {
			return err
		}
		first = runningAllocs(allocs, 0)
		if len(first) != 4 {
			return fmt.Errorf("%d running: %s", len(first), jsonString(allocs))
		}
		return allHaveProcesses(first)
	})
	return first
}

// allHaveProcesses checks that every alloc has a live process.
func allHaveProcesses(ids []string) error {
	procs := taskProcs()
	for _, id := range ids {
		if len(procs[id]) == 0 {
			return fmt.Errorf("alloc %s has no process", id)
		}
	}
	return nil
}

// sampler lists a job's allocations every 50ms and records the most
// allocs of a version that the servers want running but that are not yet
// healthy: the allocs being replaced at that moment.
type sampler struct {
	stopCh  chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	worst   int
	samples int
}

func startSampler(t *testing.T, c *apiclient.Client, jobID string, version uint64) *sampler {
	t.Helper()
	s := &sampler{stopCh: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.stopCh:
				return
			case <-tick.C:
			}
			allocs, err := jobAllocs(t, c, jobID)
			if err != nil {
				continue
			}
			n := inFlight(allocs, version)
			s.mu.Lock()
			s.samples++
			s.worst = max(s.worst, n)
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *sampler) stop() (worst, samples int) {
	close(s.stopCh)
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.worst, s.samples
}

// inFlight counts the allocs of version the servers want running whose
// health is not yet known to be good.
func inFlight(allocs []*structs.AllocationListStub, version uint64) int {
	n := 0
	for _, a := range allocs {
		if a.JobVersion != version || a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		if a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil || !*a.DeploymentStatus.Healthy {
			n++
		}
	}
	return n
}
