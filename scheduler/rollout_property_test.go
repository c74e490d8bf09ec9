package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// rolloutSim drives one group's rollout through Reconcile step by step: it
// applies each plan to its allocs, turns new allocs healthy, unhealthy or
// failed at random, marks unhealthy ones for replacement and passes
// checkpoints as the deployment watcher would, and checks the C.1
// invariants after every change.
type rolloutSim struct {
	t       *testing.T
	r       *rand.Rand
	job     *structs.Job
	allocs  []*structs.Allocation
	dep     *structs.Deployment
	nodes   []*structs.Node
	now     time.Time
	ids     int
	failPct int
}

func (s *rolloutSim) id() string { s.ids++; return fmt.Sprintf("x%d", s.ids) }

// check asserts the invariants of C.1 for the group at this instant:
// allocs desired to run ≤ count + min(max_surge, max_parallel), and
// serving allocs (old version running and not unhealthy, new version
// healthy) ≥ count − max(0, max_parallel − max_surge).
func (s *rolloutSim) check(step int, when string) {
	tg := s.job.TaskGroups[0]
	u := tg.Update
	mp, surge := u.ParallelFor(tg.Count), u.SurgeFor(tg.Count)
	run, serving := 0, 0
	for _, a := range s.allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		run++
		switch {
		case a.ClientTerminalStatus():
		case a.Job.Version == s.job.Version:
			if a.IsHealthy() {
				serving++
			}
		case !a.IsUnhealthy():
			serving++
		}
	}
	if limit := tg.Count + min(surge, mp); run > limit {
		s.t.Fatalf("step %d (%s): %d allocs desired to run, limit count %d + min(surge %d, max_parallel %d)\n%s",
			step, when, run, tg.Count, surge, mp, s.dump())
	}
	if floor := tg.Count - max(0, mp-surge); serving < floor {
		s.t.Fatalf("step %d (%s): %d allocs serve, floor count %d - max(0, max_parallel %d - surge %d)\n%s",
			step, when, serving, tg.Count, mp, surge, s.dump())
	}
}

func (s *rolloutSim) dump() string {
	out := fmt.Sprintf("job %+v\n", *s.job.TaskGroups[0].Update)
	for _, a := range s.allocs {
		out += fmt.Sprintf("  %s %s v%d desired=%s client=%s healthy=%v\n", a.ID, a.Name, a.Job.Version, a.DesiredStatus, a.ClientStatus, a.DeploymentStatus)
	}
	return out
}

// apply commits a plan as the plan applier would (every placement fits),
// with the rollout plan's own simulation of it.
func (s *rolloutSim) apply(p *Plan) {
	ps := newPlanSim(Input{Job: s.job, Allocs: s.allocs, Deployment: s.dep, Nodes: s.nodes, Now: s.now})
	ps.apply(p)
	s.allocs, s.dep = ps.allocs, ps.dep
}

// settle turns the new allocs whose health is unknown healthy, unhealthy
// or failed, and does what the deployment watcher does: marks unhealthy
// allocs for replacement and passes a checkpoint once reached.
func (s *rolloutSim) settle() {
	yes := true
	healthy := 0
	for _, a := range s.allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientTerminalStatus() || s.dep == nil || a.DeploymentID != s.dep.ID {
			continue
		}
		if a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil {
			switch roll := s.r.IntN(100); {
			case roll < s.failPct/2:
				a.ClientStatus = structs.AllocClientStatusFailed
				a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: new(bool), Timestamp: s.now}
				a.TaskStates = map[string]*structs.TaskState{"main": {State: structs.TaskStateDead, Failed: true, FinishedAt: s.now}}
			case roll < s.failPct:
				a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: new(bool), Timestamp: s.now}
			case roll < 70:
				a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: s.now}
			}
		}
		if a.IsUnhealthy() && !a.ClientTerminalStatus() {
			a.DesiredTransition.Reschedule = &yes
		}
		if a.IsHealthy() {
			healthy++
		}
	}
	if s.dep != nil {
		tg := s.job.TaskGroups[0]
		st := s.dep.TaskGroups[tg.Name]
		cps := tg.Update.CheckpointsFor(tg.Count)
		for st != nil && st.CheckpointsReached < len(cps) && healthy >= cps[st.CheckpointsReached] {
			st.CheckpointsReached++
		}
	}
}

func (s *rolloutSim) done() bool {
	tg := s.job.TaskGroups[0]
	healthy := 0
	for _, a := range s.allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientTerminalStatus() {
			continue
		}
		if a.Job.Version != s.job.Version || !a.IsHealthy() {
			return false
		}
		healthy++
	}
	return healthy == tg.Count
}

func randomAmount(r *rand.Rand, max int) *structs.Amount {
	if r.IntN(2) == 0 {
		return structs.Percent(r.IntN(101))
	}
	return structs.Count(r.IntN(max + 1))
}

// TestRolloutInvariantsProperty drives random rollouts (count, width as a
// count or a percent, surge, first batch, max_failed, unhealthy_first,
// checkpoints) with random failures of the new version through the
// reconciler, and asserts the C.1 invariants at every step and that every
// rollout ends with all allocs new and healthy.
func TestRolloutInvariantsProperty(t *testing.T) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 15))
		count := 1 + r.IntN(12)
		u := structs.DefaultUpdateStrategy()
		u.MaxParallel = 1 + r.IntN(5)
		if r.IntN(3) == 0 {
			p := r.IntN(101)
			u.MaxParallelPercent = &p
			u.MaxParallel = u.ParallelFor(count)
		}
		if r.IntN(3) > 0 {
			u.MaxSurge = randomAmount(r, 6)
		}
		if r.IntN(3) == 0 {
			u.FirstBatch = randomAmount(r, 3)
			if !u.FirstBatch.Percent && u.FirstBatch.Value == 0 {
				u.FirstBatch.Value = 1
			}
		}
		if r.IntN(3) == 0 {
			u.MaxFailed = randomAmount(r, 3)
		}
		u.UnhealthyFirst = r.IntN(4) == 0
		if r.IntN(3) == 0 {
			u.Checkpoints = []structs.Amount{*structs.Percent(25), *structs.Count(max(2, count-1))}
		}
		old := baseJob()
		old.TaskGroups[0].Count = count
		old.TaskGroups[0].Update = u.Copy()
		job := old.Copy()
		job.Version = 1
		job.TaskGroups[0].Tasks[0].Env = map[string]string{"A": "2"}
		s := &rolloutSim{t: t, r: r, job: job, now: baseTime, failPct: r.IntN(30),
			nodes: []*structs.Node{testNode("n0", "ready")}}
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			s.t = t
			for i := range count {
				ok := true
				a := &structs.Allocation{
					ID: fmt.Sprintf("old%d", i), Name: structs.AllocName(job.ID, "web", i), JobID: job.ID, Job: old,
					TaskGroup: "web", NodeID: "n0", NodeName: "n0", DesiredStatus: structs.AllocDesiredStatusRun,
					ClientStatus: structs.AllocClientStatusRunning, DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &ok},
				}
				s.allocs = append(s.allocs, a)
			}
			for step := 0; step < 400; step++ {
				s.check(step, "before the pass")
				checkLiveEquivalent(t, fmt.Sprintf("step %d", step), Input{Job: s.job, Allocs: s.allocs, Deployment: s.dep,
					Nodes: s.nodes, Now: s.now, EvalID: "eval"})
				p := Reconcile(Input{Job: s.job, Allocs: s.allocs, Deployment: s.dep, Nodes: s.nodes, Now: s.now,
					IDs: s.id, EvalID: "eval"})
				s.apply(p)
				s.check(step, "after the plan")
				if s.done() {
					return
				}
				s.now = s.now.Add(time.Minute)
				s.settle()
			}
			t.Fatalf("rollout did not finish in 400 steps\n%s", s.dump())
		})
	}
}
