package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/structs"
)

// jobID names a scenario's job, unique per run so that runs against
// long-lived servers do not collide.
func jobID(name string, res *Result) string {
	return fmt.Sprintf("sim-%s-%d", name, res.Started.UnixMilli()%1_000_000)
}

// scenarioJobID is the job the scenario reads probe: its (first) job.
func scenarioJobID(scenario string, res *Result) string {
	if scenario == ScenarioChurn {
		return fmt.Sprintf("%s-%03d", jobID("churn", res), 0)
	}
	if scenario == ScenarioJobs {
		return jobID("jobs", res) // the one rolled out
	}
	return jobID(scenario, res)
}

// runPlace registers one job of Count allocs and times placement and
// running.
func runPlace(ctx context.Context, e *env) error {
	spec := JobSpec{ID: jobID("place", e.res), Count: e.cfg.Count, Version: "1"}
	meter := startCPUMeter(e.serverPIDs())
	start := time.Now()
	// Also when the scenario does not finish: reads matter most then.
	defer func() { e.addReadFigures("place_", start, time.Now()) }()
	evalID, _, err := e.registerEval(ctx, spec)
	if err != nil {
		return err
	}
	// The evaluation's ModifyTime, stamped by the leader (same machine,
	// same clock) when its plan was committed, times placement without
	// the delay of reading a summary from a loaded server.
	e.progress.Draw("place", 0, spec.Count)
	ev, err := e.waitEval(ctx, evalID)
	if err != nil {
		return err
	}
	placedByEval := ev.Status == structs.EvalStatusComplete && ev.QueuedAllocations["g"] == 0
	e.serverRSS("placed_")
	if placedByEval {
		e.addPlaced(spec.Count, time.Unix(0, ev.ModifyTime).Sub(start))
	} else {
		e.res.Note("evaluation %s ended %s with %v queued: placement timed from the summary", ev.ID, ev.Status, ev.QueuedAllocations)
	}
	placedAt := func() {
		if !placedByEval {
			e.addPlaced(spec.Count, time.Since(start))
		}
	}
	if err := e.waitRunning(ctx, spec.ID, spec.Count, "place", placedAt); err != nil {
		return err
	}
	e.res.Add("time_to_all_running_s", round(time.Since(start).Seconds()), "s", "")
	// Placing costs the plans and, on every server, the clients' reports
	// of the allocs running: measured to all running.
	use, useErr := meter.stop()
	e.addCPUFigures("place_", use, useErr)
	if useErr == nil {
		e.addServerCost("place_", use, spec.Count)
	}
	e.addLeaderHeap("", spec.Count)
	return nil
}

// addPlaced records the placement figures.
func (e *env) addPlaced(count int, took time.Duration) {
	e.res.Add("time_to_all_placed_s", round(took.Seconds()), "s", "<= 20 s at 100,000")
	e.res.Add("placements_per_s", round(float64(count)/took.Seconds()), "allocs/s", ">= 5000")
}

// rolloutJob is the rollout's job at a version.
func rolloutJob(e *env, name, version string) JobSpec {
	return JobSpec{ID: jobID(name, e.res), Count: e.cfg.Count, MaxParallel: e.cfg.MaxParallel,
		MinHealthyTime: e.cfg.MinHealthyTime, Version: version, Zones: e.cfg.Scenario == ScenarioZones,
		MaxSurge: e.cfg.MaxSurge, Groups: e.cfg.Groups, StickyDisk: e.cfg.StickyDisk}
}

// groupsBound is the lower bound of a rollout of spec's groups one at a
// time: the sum over its groups of ceil(group count / max_parallel) ×
// min_healthy_time.
func groupsBound(spec JobSpec) time.Duration {
	var lb time.Duration
	for i := range spec.GroupNames() {
		lb += lowerBound(spec.GroupCount(i), spec.MaxParallel, spec.MinHealthyTime)
	}
	return lb
}

// zoneNames are the meta.zone values of n zones ("zone-01", …); nil for
// n <= 0 (the fleet's defaults).
func zoneNames(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("zone-%02d", i+1))
	}
	return out
}

// zonesBound is the lower bound of a zone-by-zone rollout of the job:
// the sum over its zones of ceil(zone size / max_parallel) ×
// min_healthy_time, from the sizes its latest deployment recorded.
func zonesBound(ctx context.Context, e *env, jobID string) (time.Duration, int, error) {
	d, err := e.latestDeployment(ctx, jobID)
	if err != nil {
		return 0, 0, err
	}
	var lb time.Duration
	zones := 0
	if d != nil {
		for _, g := range d.TaskGroups {
			for _, z := range g.Zones {
				zones++
				lb += lowerBound(z.Size, e.cfg.MaxParallel, e.cfg.MinHealthyTime)
			}
		}
	}
	if zones == 0 {
		return 0, 0, fmt.Errorf("the zones rollout's deployment of %s recorded no zones", jobID)
	}
	return lb, zones, nil
}

// lowerBound is ceil(count/max_parallel) × min_healthy_time.
func lowerBound(count, maxParallel int, minHealthy time.Duration) time.Duration {
	if maxParallel <= 0 {
		return minHealthy
	}
	return time.Duration(math.Ceil(float64(count)/float64(maxParallel))) * minHealthy
}

// runRollout places the first version, then times the rollout of a
// second. It returns the rollout's duration.
func runRollout(ctx context.Context, e *env, name string, quiet bool) (time.Duration, error) {
	v1 := rolloutJob(e, name, "1")
	start := time.Now()
	if _, err := e.register(ctx, v1); err != nil {
		return 0, err
	}
	if err := e.waitDeployment(ctx, v1.ID, 0, "version 0", nil); err != nil {
		return 0, err
	}
	first := time.Since(start)
	e.progress.Done()
	meter := startCPUMeter(e.serverPIDs())
	registered := time.Now()
	var timers *timerPoller
	if !quiet {
		timers = e.pollTimers(ctx, registered, 2*time.Second)
	}
	took, err := rollTo(ctx, e, name, "2", 1, nil)
	if err != nil {
		if timers != nil {
			timers.stop()
		}
		return 0, err
	}
	use, useErr := meter.stop()
	if !quiet {
		lb := lowerBound(e.cfg.Count, e.cfg.MaxParallel, e.cfg.MinHealthyTime)
		if e.cfg.Scenario == ScenarioZones {
			zlb, zones, err := zonesBound(ctx, e, v1.ID)
			if err != nil {
				return 0, err
			}
			lb = zlb
			e.res.Add("zones", float64(zones), "", "")
		}
		if e.cfg.Scenario == ScenarioGroups {
			lb = groupsBound(v1)
			e.res.Add("groups", float64(len(v1.GroupNames())), "", "")
		}
		e.res.Add("first_version_healthy_s", round(first.Seconds()), "s", "")
		e.res.Add("rollout_s", round(took.Seconds()), "s", "")
		e.res.Add("lower_bound_s", round(lb.Seconds()), "s", "")
		e.res.Add("rollout_over_lower_bound", round(took.Seconds()/lb.Seconds()), "x", "<= 1.2")
		e.addCPUFigures("rollout_", use, useErr)
		if useErr == nil {
			e.addServerCost("rollout_", use, e.cfg.Count)
		}
		// Both versions' allocs are in the state now.
		e.addLeaderHeap("rollout_", 0)
		e.addReadFigures("rollout_", registered, registered.Add(took))
		if err := e.addStages(ctx, v1.ID, 1, registered, registered.Add(took)); err != nil {
			e.res.Note("rollout stages not read: %v", err)
		}
		timers.finish(ctx, e, "rollout_", registered.Add(took))
	}
	return took, nil
}

// rollTo registers the job at version (the job version it becomes is
// jobVersion) and waits until its deployment succeeds.
func rollTo(ctx context.Context, e *env, name, version string, jobVersion uint64, onHealthy func(int)) (time.Duration, error) {
	spec := rolloutJob(e, name, version)
	start := time.Now()
	if _, err := e.register(ctx, spec); err != nil {
		return 0, err
	}
	if err := e.waitDeployment(ctx, spec.ID, jobVersion, fmt.Sprintf("version %d", jobVersion), onHealthy); err != nil {
		return 0, err
	}
	e.progress.Done()
	return time.Since(start), nil
}

// runFailover rolls out three times: once for reference, once with the
// leader SIGKILLed when half the allocs are healthy, and, once the killed
// server is back and has caught up, once more for reference. Each rollout
// of the job is slower than the one before (9.6 s between the first two
// in a run without a kill; the third about 10 s slower than the first:
// the job's evaluations pile up until collected, and after the kill the
// clients of the killed server stay on the other two), so the kill's
// rollout is compared with the mean of the two around it.
func runFailover(ctx context.Context, e *env) error {
	ref, err := runRollout(ctx, e, "failover", true)
	if err != nil {
		return err
	}
	var once sync.Once
	var killed *ServerProc
	var killedAt time.Time
	var killErr error
	newLeader := make(chan time.Time, 1)
	kill := func(healthy int) {
		if healthy < e.cfg.Count/2 {
			return
		}
		once.Do(func() {
			l, err := e.servers.Leader(ctx)
			if err != nil {
				killErr = err
				return
			}
			killedAt = time.Now()
			l.Kill()
			killed = l
			e.res.Note("killed leader %s at %d/%d healthy", l.Name, healthy, e.cfg.Count)
			go func() { newLeader <- e.waitNewLeader(ctx) }()
		})
	}
	from := time.Now()
	took, err := rollTo(ctx, e, "failover", "3", 2, kill)
	if err != nil {
		return err
	}
	// The killed server's reads fail at once (connection refused): they
	// are counted in a note, not timed (see readFigures).
	e.addReadFigures("failover_", from, time.Now())
	if killErr != nil {
		return fmt.Errorf("finding the leader to kill: %w", killErr)
	}
	if killedAt.IsZero() {
		e.res.Note("the rollout finished before the leader could be killed")
		return nil
	}
	if at := <-newLeader; !at.IsZero() {
		e.res.Add("failover_new_leader_s", round(at.Sub(killedAt).Seconds()), "s", "")
	}
	if gap, err := e.placementGap(ctx, jobID("failover", e.res), 2, killedAt); err != nil {
		e.res.Note("failover placement gap: %v", err)
	} else if gap > 0 {
		e.res.Add("failover_placement_gap_s", round(gap.Seconds()), "s", "")
	}
	if err := e.servers.Restart(killed); err != nil {
		return fmt.Errorf("restarting %s: %w", killed.Name, err)
	}
	if err := e.waitCaughtUp(ctx, killed, jobID("failover", e.res), 2); err != nil {
		return fmt.Errorf("waiting for %s to catch up: %w", killed.Name, err)
	}
	after, err := rollTo(ctx, e, "failover", "4", 3, nil)
	if err != nil {
		return err
	}
	lb := lowerBound(e.cfg.Count, e.cfg.MaxParallel, e.cfg.MinHealthyTime)
	e.res.Add("rollout_s", round(ref.Seconds()), "s", "")
	e.res.Add("rollout_with_leader_kill_s", round(took.Seconds()), "s", "")
	e.res.Add("rollout_after_s", round(after.Seconds()), "s", "")
	e.res.Add("failover_extra_s", round((took - (ref+after)/2).Seconds()), "s", "<= 2")
	e.res.Add("lower_bound_s", round(lb.Seconds()), "s", "")
	return nil
}

// runChurn submits Jobs jobs of Count allocs at once and times register
// latency and the time until all run.
func runChurn(ctx context.Context, e *env) error {
	n := e.cfg.Jobs
	ids := make([]string, n)
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		ids[i] = fmt.Sprintf("%s-%03d", jobID("churn", e.res), i) // scenarioJobID names the first
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat[i], errs[i] = e.register(ctx, JobSpec{ID: ids[i], Count: e.cfg.Count, Version: "1"})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if err := waitAllRunning(ctx, e, ids, "every churn job running", "churn run"); err != nil {
		return err
	}
	slices.Sort(lat)
	e.res.Add("time_to_all_running_s", round(time.Since(start).Seconds()), "s", "")
	e.addReadFigures("churn_", start, time.Now())
	e.res.Add("register_p50_ms", round(ms(percentile(lat, 0.50))), "ms", "")
	e.res.Add("register_p99_ms", round(ms(percentile(lat, 0.99))), "ms", "")
	e.res.Add("register_max_ms", round(ms(lat[len(lat)-1])), "ms", "")
	return nil
}

// waitAllRunning polls the jobs' summaries until each job runs its Count
// allocs, drawing the progress under label.
func waitAllRunning(ctx context.Context, e *env, ids []string, what, label string) error {
	pending := slices.Clone(ids)
	total := len(ids) * e.cfg.Count
	return poll(ctx, what, func() (bool, error) {
		sums, err := e.summaries(ctx, pending)
		if err != nil {
			return false, err
		}
		var still []string
		running := (len(ids) - len(pending)) * e.cfg.Count
		for i, id := range pending {
			running += min(sums[i].Running, e.cfg.Count)
			if sums[i].Running < e.cfg.Count {
				still = append(still, id)
			}
		}
		pending = still
		e.progress.Draw(label, running, total)
		return len(pending) == 0, nil
	})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile returns the p-th percentile (nearest rank) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// runJobs registers Jobs jobs of Count allocs at once, each with the
// rollout's update block, waits until all run, then rolls the first one
// out: the reads probed meanwhile (GET /v1/jobs among them, which reads
// every job's summary) are those of a busy cluster with many jobs.
func runJobs(ctx context.Context, e *env) error {
	n := e.cfg.Jobs
	first := rolloutJob(e, "jobs", "1")
	specs := make([]JobSpec, n)
	for i := range specs {
		specs[i] = first
		if i > 0 {
			specs[i].ID = fmt.Sprintf("%s-%03d", first.ID, i)
		}
	}
	meter := startCPUMeter(e.serverPIDs())
	start := time.Now()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.register(ctx, specs[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	ids := make([]string, n)
	for i, s := range specs {
		ids[i] = s.ID
	}
	if err := waitAllRunning(ctx, e, ids, "every job running", "jobs run"); err != nil {
		return err
	}
	total := n * e.cfg.Count
	e.progress.Done()
	e.res.Add("time_to_all_running_s", round(time.Since(start).Seconds()), "s", "")
	e.addReadFigures("place_", start, time.Now())
	use, useErr := meter.stop()
	e.addCPUFigures("place_", use, useErr)
	if useErr == nil {
		e.addServerCost("place_", use, total)
	}
	meter = startCPUMeter(e.serverPIDs())
	registered := time.Now()
	took, err := rollTo(ctx, e, "jobs", "2", 1, nil)
	if err != nil {
		return err
	}
	e.res.Add("rollout_s", round(took.Seconds()), "s", "")
	e.addReadFigures("rollout_", registered, registered.Add(took))
	use, useErr = meter.stop()
	e.addCPUFigures("rollout_", use, useErr)
	if useErr == nil {
		e.addServerCost("rollout_", use, e.cfg.Count)
	}
	e.addLeaderHeap("", total)
	return nil
}
