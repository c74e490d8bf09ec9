package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// The job restart tests (website/commands/job-restart.md) run `drover job
// restart` against real agents with raw_exec tasks and sample the job's
// allocs while it runs.

// restartSample watches a job's allocs every 20ms while a restart runs:
// the most slots out of service at once (an alloc not running, or not
// known healthy) and every alloc ID seen.
type restartSample struct {
	stopCh  chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	worst   int
	least   int // fewest serving
	samples int
	ids     map[string]bool
}

func sampleRestart(t testing.TB, c *apiclient.Client, jobID string, count int) *restartSample {
	s := &restartSample{stopCh: make(chan struct{}), done: make(chan struct{}), least: count, ids: map[string]bool{}}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stopCh:
				return
			case <-time.After(20 * time.Millisecond):
			}
			allocs, err := jobAllocs(t, c, jobID)
			if err != nil {
				continue
			}
			serving := 0
			for _, a := range allocs {
				if a.DesiredStatus != structs.AllocDesiredStatusRun {
					continue
				}
				if running(a) && healthy(a) && a.TaskStates["main"] != nil && a.TaskStates["main"].State == structs.TaskStateRunning {
					serving++
				}
			}
			s.mu.Lock()
			for _, a := range allocs {
				s.ids[a.ID] = true
			}
			s.samples++
			s.worst = max(s.worst, count-serving)
			s.least = min(s.least, serving)
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *restartSample) stop() *restartSample {
	close(s.stopCh)
	<-s.done
	return s
}

// startedAt maps each running alloc of the job to its task's start.
func startedAt(t testing.TB, c *apiclient.Client, jobID string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	for _, a := range allocsOf(t, c, jobID) {
		if a.DesiredStatus == structs.AllocDesiredStatusRun && running(a) && a.TaskStates["main"] != nil {
			out[a.ID] = a.TaskStates["main"].StartedAt
		}
	}
	return out
}

// userRestarts counts the "Restart Signaled" events of an alloc's task.
func userRestarts(t testing.TB, c *apiclient.Client, id string) int {
	t.Helper()
	a, _, err := c.Allocations().Info(ctx(t), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if st := a.TaskStates["main"]; st != nil {
		for _, e := range st.Events {
			if e.Type == structs.TaskRestartSignal {
				n++
			}
		}
	}
	return n
}

// TestJobRestartInPlace: a 6-alloc job with max_parallel = 2 restarted in
// place: every task's start time moves, once; never more than 2 allocs out
// of service; the same alloc IDs; the command exits 0 when done.
func TestJobRestartInPlace(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	s := rolloutSpec{ID: "restart-inplace", Count: 6, Version: "1", Update: "      max_parallel = 2\n" + fastUpdate}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	before := startedAt(t, c, s.ID)
	if len(before) != 6 {
		t.Fatalf("%d allocs running, want 6", len(before))
	}

	out, err := p.cli(t, "job", "restart", "-plan", s.ID)
	if err != nil || strings.Count(out, "web[") != 6 || !strings.Contains(out, "Restart plan") {
		t.Fatalf("job restart -plan: %v\n%s", err, out)
	}
	if deps, _, err := c.Jobs().Deployments(ctx(t), s.ID, true, nil); err != nil || len(deps) != 1 {
		t.Fatalf("-plan wrote something: %d deployments, %v", len(deps), err)
	}

	av := sampleRestart(t, c, s.ID, 6)
	out, err = p.cli(t, "job", "restart", "-yes", s.ID)
	av.stop()
	if err != nil || !strings.Contains(out, "successful") {
		t.Fatalf("job restart: %v\n%s", err, out)
	}
	t.Logf("%d samples: at most %d allocs out of service", av.samples, av.worst)
	if av.samples == 0 || av.worst > 2 {
		t.Errorf("max_parallel 2 exceeded: %d allocs out of service at once (%d samples)", av.worst, av.samples)
	}
	after := startedAt(t, c, s.ID)
	if len(after) != 6 {
		t.Fatalf("%d allocs running after the restart, want 6", len(after))
	}
	for id, at := range before {
		if !after[id].After(at) {
			t.Errorf("alloc %s: started %s, then %s: not restarted", id, at, after[id])
		}
		if n := userRestarts(t, c, id); n != 1 {
			t.Errorf("alloc %s restarted %d times, want once", id, n)
		}
	}
	if len(av.ids) != 6 {
		t.Errorf("%d alloc IDs seen, want the same 6", len(av.ids))
	}
	d, err := latestDeployment(t, c, s.ID)
	if err != nil || d.Restart == nil || d.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("the restart's deployment: %v %s", err, jsonString(d))
	}
	// A second restart with a bad input changes nothing.
	for _, args := range [][]string{{"-group", "nope"}, {"-task", "nope"}, {"-batch-size", "0"}} {
		out, err := p.cli(t, append(append([]string{"job", "restart", "-yes"}, args...), s.ID)...)
		if err == nil || !strings.Contains(out, "nope") && !strings.Contains(out, "-batch-size") {
			t.Errorf("job restart %v: %v\n%s", args, err, out)
		}
	}
	if deps, _, _ := c.Jobs().Deployments(ctx(t), s.ID, true, nil); len(deps) != 2 {
		t.Errorf("%d deployments after refused restarts, want 2", len(deps))
	}
}

// TestJobRestartReschedule: with -reschedule and max_surge = 2 the allocs
// are replaced, create before destroy: 6 new alloc IDs, and serving never
// below 6.
func TestJobRestartReschedule(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	s := rolloutSpec{ID: "restart-resched", Count: 6, Version: "1", Update: "      max_parallel = 2\n      max_surge = 2\n" + fastUpdate}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	before := startedAt(t, c, s.ID)

	av := sampleRestart(t, c, s.ID, 6)
	out, err := p.cli(t, "job", "restart", "-yes", "-reschedule", s.ID)
	if err != nil || !strings.Contains(out, "successful") {
		av.stop()
		t.Fatalf("job restart -reschedule: %v\n%s", err, out)
	}
	// The last old allocs stop once their replacements are healthy.
	eventually(t, 30*time.Second, "six new allocs running, no old one", func() error {
		now := startedAt(t, c, s.ID)
		for id := range now {
			if _, old := before[id]; old {
				return fmt.Errorf("old alloc %s still runs", id)
			}
		}
		if len(now) != 6 {
			return fmt.Errorf("%d running", len(now))
		}
		return nil
	})
	av.stop()
	t.Logf("%d samples: at least %d serving", av.samples, av.least)
	if av.least < 6 {
		t.Errorf("serving dropped to %d, below count 6", av.least)
	}
}

// restartsOf counts, per running alloc of the job, its task's "Restart
// Signaled" events (a stub carries the task states).
func restartsOf(t testing.TB, c *apiclient.Client, jobID string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, a := range allocsOf(t, c, jobID) {
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		out[a.ID] = 0
		if st := a.TaskStates["main"]; st != nil {
			for _, e := range st.Events {
				if e.Type == structs.TaskRestartSignal {
					out[a.ID]++
				}
			}
		}
	}
	return out
}

func sumRestarts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// checkOnce checks that the same allocs as before run, each restarted
// exactly once.
func checkOnce(t testing.TB, before map[string]time.Time, after map[string]int) {
	t.Helper()
	if len(after) != len(before) {
		t.Errorf("%d allocs after the restart, %d before", len(after), len(before))
	}
	for id := range before {
		if n, ok := after[id]; !ok || n != 1 {
			t.Errorf("alloc %s restarted %d times (present %t), want once", id, n, ok)
		}
	}
}

// detachedRestart starts a restart through the CLI without waiting and
// returns its deployment ID.
func detachedRestart(t testing.TB, p *agentProc, args ...string) string {
	t.Helper()
	out, err := p.cli(t, append([]string{"job", "restart", "-detach", "-verbose"}, args...)...)
	if err != nil {
		t.Fatalf("job restart -detach: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// TestJobRestartPauseResume: `deployment pause` mid-restart holds it (no
// alloc restarts meanwhile) and `deployment resume` finishes it, each alloc
// restarted once.
func TestJobRestartPauseResume(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	upd := `      max_parallel      = 1
      health_check      = "task_states"
      min_healthy_time  = "2s"
      healthy_deadline  = "20s"
      progress_deadline = "1m"`
	s := rolloutSpec{ID: "restart-pause", Count: 4, Version: "1", Update: upd}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	before := startedAt(t, c, s.ID)

	id := detachedRestart(t, p, s.ID)
	eventually(t, 30*time.Second, "a first alloc restarted", func() error {
		if n := sumRestarts(restartsOf(t, c, s.ID)); n < 1 {
			return fmt.Errorf("%d restarted", n)
		}
		return nil
	})
	if out, err := p.cli(t, "deployment", "pause", "-detach", id); err != nil {
		t.Fatalf("pause: %v\n%s", err, out)
	}
	held := sumRestarts(restartsOf(t, c, s.ID))
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if n := sumRestarts(restartsOf(t, c, s.ID)); n != held {
			t.Fatalf("paused, yet %d allocs restarted, %d at the pause", n, held)
		}
		if d := deploymentByID(t, c, id); d.Status != structs.DeploymentStatusPaused {
			t.Fatalf("paused restart is %s", d.Status)
		}
	}
	if out, err := p.cli(t, "deployment", "resume", "-detach", id); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	waitDeploymentByID(t, c, id, "the restart successful", 60*time.Second, func(d *structs.Deployment) error {
		if d.Status != structs.DeploymentStatusSuccessful {
			return fmt.Errorf("%s: %s", d.Status, d.StatusDescription)
		}
		return nil
	})
	checkOnce(t, before, restartsOf(t, c, s.ID))
}

// TestJobRestartSurvivesFailover: on three servers, the leader is killed
// mid-restart of two jobs, one in place and one with -reschedule and
// max_surge; the new leader finishes both: each alloc of the first
// restarted once, every alloc of the second replaced once (six new IDs,
// none of the old left).
func TestJobRestartSurvivesFailover(t *testing.T) {
	chaosCheck(t)
	c := startChaosCluster(t)
	upd := `      max_parallel      = 2
      health_check      = "task_states"
      min_healthy_time  = "2s"
      healthy_deadline  = "20s"
      progress_deadline = "1m"`
	s := rolloutSpec{ID: "restart-failover", Count: 6, Version: "1", Update: upd}
	r := rolloutSpec{ID: "resched-failover", Count: 6, Version: "1", Update: "      max_surge = 2\n" + upd}
	for _, j := range []rolloutSpec{s, r} {
		stopJobProcs(t, c.api(), j.ID)
		j.run(t, c.api())
	}
	for _, j := range []rolloutSpec{s, r} {
		waitRollout(t, c.api(), j.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	}
	before := startedAt(t, c.api(), s.ID)
	old := startedAt(t, c.api(), r.ID)

	id := detachedRestart(t, c.any(), s.ID)
	rid := detachedRestart(t, c.any(), "-reschedule", r.ID)
	eventually(t, 30*time.Second, "a first batch of each restarted", func() error {
		if n := sumRestarts(restartsOf(t, c.api(), s.ID)); n < 2 {
			return fmt.Errorf("%d restarted in place", n)
		}
		replaced := 0
		for _, a := range allocsOf(t, c.api(), r.ID) {
			if _, was := old[a.ID]; !was {
				replaced++
			}
		}
		if replaced < 2 {
			return fmt.Errorf("%d replacements", replaced)
		}
		return nil
	})
	killed := c.killLeader()
	leader := c.waitLeader(c.up())
	t.Logf("killed %s; %s leads", killed.name, leader.name)
	for _, d := range []string{id, rid} {
		waitDeploymentByID(t, c.api(), d, "the restart successful", 90*time.Second, func(d *structs.Deployment) error {
			if d.Status != structs.DeploymentStatusSuccessful {
				return fmt.Errorf("%s: %s", d.Status, d.StatusDescription)
			}
			return nil
		})
	}
	checkOnce(t, before, restartsOf(t, c.api(), s.ID))
	eventually(t, 30*time.Second, "six new allocs running, none of the old", func() error {
		now := startedAt(t, c.api(), r.ID)
		for a := range now {
			if _, was := old[a]; was {
				return fmt.Errorf("old alloc %s still runs", a)
			}
		}
		if len(now) != 6 {
			return fmt.Errorf("%d running", len(now))
		}
		return nil
	})
}

// restartTimes maps each alloc of the job that runs to when its task was
// asked to restart (its "Restart Signaled" event) and when it was healthy
// again, and its zone.
type restartTime struct {
	zone               string
	restarted, healthy time.Time
}

func restartTimes(t testing.TB, c *apiclient.Client, jobID string) map[string]restartTime {
	t.Helper()
	out := map[string]restartTime{}
	for _, a := range allocsOf(t, c, jobID) {
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		rt := restartTime{zone: nodeZone(a.NodeName)}
		if st := a.TaskStates["main"]; st != nil {
			for _, e := range st.Events {
				if e.Type == structs.TaskRestartSignal {
					rt.restarted = time.Unix(0, e.Time)
				}
			}
		}
		if healthy(a) {
			rt.healthy = a.DeploymentStatus.Timestamp
		}
		out[a.ID] = rt
	}
	return out
}

// TestJobRestartZones: over six clients in three zones, a restart in place
// follows the update block's zones: fewest first (b, c, a), each zone
// restarted only once the one before is healthy again. With a disruption
// budget of 1 and on_failure = "pause", an alloc of zone c that cannot
// start again pauses the restart at zone c, and zone a is left alone.
func TestJobRestartZones(t *testing.T) {
	t.Parallel()
	server := startZoneCluster(t)
	c := server.client()

	t.Run("order", func(t *testing.T) {
		t.Parallel()
		spec := zoneSpec("restart-zones", []string{"disruption_budget = 1"}, "max_parallel = 2")
		stopJobProcs(t, c, spec.ID)
		spec.run(t, c)
		waitRollout(t, c, spec.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
		before := startedAt(t, c, spec.ID)
		out, err := server.cli(t, "job", "restart", "-yes", spec.ID)
		if err != nil || !strings.Contains(out, "successful") {
			t.Fatalf("job restart: %v\n%s", err, out)
		}
		d, err := latestDeployment(t, c, spec.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := zoneStates(webState(t, d)), doneZones("b", "c", "a"); got != want {
			t.Errorf("restart zones %q, want %q", got, want)
		}
		checkOnce(t, before, restartsOf(t, c, spec.ID))
		times := restartTimes(t, c, spec.ID)
		order := []string{"b", "c", "a"}
		for i := 1; i < len(order); i++ {
			var lastHealthy, firstRestart time.Time
			for _, rt := range times {
				switch rt.zone {
				case order[i-1]:
					if rt.healthy.After(lastHealthy) {
						lastHealthy = rt.healthy
					}
				case order[i]:
					if firstRestart.IsZero() || rt.restarted.Before(firstRestart) {
						firstRestart = rt.restarted
					}
				}
			}
			if firstRestart.Before(lastHealthy) {
				t.Errorf("zone %s restarted from %s, before zone %s was healthy again at %s", order[i], firstRestart, order[i-1], lastHealthy)
			}
		}
	})

	t.Run("budget_pause", func(t *testing.T) {
		t.Parallel()
		spec := zoneSpec("restart-budget", []string{"disruption_budget = 1"}, "max_parallel = 2", `on_failure = "pause"`)
		// A task of zone c runs once: started again, it fails.
		spec.Script = `if [ "${meta.zone}" = c ] && [ -f "$NOMAD_TASK_DIR/ran" ]; then exit 1; fi; touch "$NOMAD_TASK_DIR/ran"; exec sleep 600`
		stopJobProcs(t, c, spec.ID)
		spec.run(t, c)
		waitRollout(t, c, spec.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
		id := detachedRestart(t, server, spec.ID)
		const want = "Deployment paused: 1 allocations failed in zone c, reaching its disruption budget 1"
		d := waitDeploymentByID(t, c, id, "the restart paused at zone c", 60*time.Second, pausedWith(want))
		if got := zoneStates(webState(t, d)); !strings.HasPrefix(got, "b 1/1/0/0 done, c 2/") || !strings.HasSuffix(got, "a 3/0/0/0 waiting") {
			t.Errorf("restart zones %q", got)
		}
		time.Sleep(2 * time.Second)
		for id, rt := range restartTimes(t, c, spec.ID) {
			if rt.zone == "a" && !rt.restarted.IsZero() {
				t.Errorf("alloc %s of zone a restarted while the restart is paused at zone c", id)
			}
		}
	})
}
