package deployment

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// randomObservation builds a deployment of one to three groups with random
// counts, canaries, flags, deadlines and allocation health, observed at a
// random time within the first half hour.
func randomObservation(r *rand.Rand) Observation {
	status := structs.DeploymentStatusRunning
	if r.IntN(4) == 0 {
		status = structs.DeploymentStatusPaused
	}
	job := &structs.Job{ID: "web", Namespace: "default", Version: 2, Meta: map[string]string{"v": "2"}}
	d := &structs.Deployment{ID: "d1", JobID: "web", JobVersion: 2, Status: status,
		TaskGroups: map[string]*structs.DeploymentState{}}
	if r.IntN(2) == 0 {
		d.CreateTime = t0.UnixNano()
	}
	var allocs []*structs.Allocation
	for gi := range 1 + r.IntN(3) {
		name := fmt.Sprintf("g%d", gi)
		s := &structs.DeploymentState{
			DesiredTotal:    r.IntN(4),
			DesiredCanaries: r.IntN(3),
			AutoPromote:     r.IntN(2) == 0,
			AutoRevert:      r.IntN(2) == 0,
			Promoted:        r.IntN(3) == 0,
		}
		if r.IntN(5) > 0 {
			s.ProgressDeadline = 10 * time.Minute
			if r.IntN(5) > 0 {
				s.RequireProgressBy = t0.Add(time.Duration(r.IntN(30)) * time.Minute)
			}
		}
		policy := &structs.ReschedulePolicy{Attempts: r.IntN(3), Interval: time.Hour, Unlimited: r.IntN(3) == 0}
		job.TaskGroups = append(job.TaskGroups, &structs.TaskGroup{Name: name, Count: s.DesiredTotal, ReschedulePolicy: policy})
		d.TaskGroups[name] = s
		for ai := range r.IntN(6) {
			a := &structs.Allocation{
				ID: fmt.Sprintf("%s-a%d", name, ai), TaskGroup: name, DeploymentID: d.ID, Job: job,
				DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
				DeploymentStatus: &structs.AllocDeploymentStatus{Canary: r.IntN(2) == 0, ModifyIndex: uint64(r.IntN(20))},
			}
			switch r.IntN(4) {
			case 0:
				a.DeploymentStatus.Healthy = boolp(false)
			case 1, 2:
				a.DeploymentStatus.Healthy = boolp(true)
			}
			if r.IntN(6) == 0 {
				a.DesiredStatus = structs.AllocDesiredStatusStop
			}
			if r.IntN(4) == 0 {
				a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{{RescheduleTime: t0.UnixNano()}}}
			}
			if a.IsCanary() {
				s.PlacedCanaries = append(s.PlacedCanaries, a.ID)
			}
			allocs = append(allocs, a)
		}
	}
	var stable *structs.Job
	if r.IntN(2) == 0 {
		stable = job.Copy()
		stable.Version = 1
		stable.Meta = map[string]string{"v": "1"}
	}
	return Observation{
		Deployment: d, Job: job, LatestJob: job, StableJob: stable, Allocs: allocs,
		LatestEvalIndex: uint64(r.IntN(20)),
		Now:             t0.Add(time.Duration(r.IntN(40)) * time.Minute),
	}
}

// referenceExempt is a plain restatement of B.3's exemptions for one group
// past its deadline: it is done (promoted if it has canaries, enough
// healthy live allocs), or it waits for promotion with all its canaries
// healthy.
func referenceExempt(obs Observation, name string, s *structs.DeploymentState) bool {
	healthy, canaries := 0, 0
	for _, a := range obs.Allocs {
		if a.TaskGroup != name || a.TerminalStatus() || !a.IsHealthy() {
			continue
		}
		healthy++
		for _, id := range s.PlacedCanaries {
			if id == a.ID {
				canaries++
				break
			}
		}
	}
	if s.DesiredCanaries > 0 && !s.Promoted {
		return canaries >= s.DesiredCanaries
	}
	return healthy >= s.DesiredTotal
}

// TestDecideProperties checks invariants of Decide on many random
// observations: B.3 (no running deployment past a deadline unless paused or
// holding healthy canaries for promotion), WakeAt strictly ahead of Now
// (a watcher can never spin), failures always ask for a pass, auto
// promotion only of healthy canaries, and determinism.
func TestDecideProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := range n {
		obs := randomObservation(r)
		dec := Decide(obs)
		if again := Decide(obs); !reflect.DeepEqual(dec, again) {
			t.Fatalf("case %d: Decide is not deterministic:\n%v\n%v", i, dec, again)
		}
		d := obs.Deployment
		status := d.Status
		if dec.Status != "" {
			status = dec.Status
		}
		if status == structs.DeploymentStatusRunning {
			for name, s := range d.TaskGroups {
				deadline := s.RequireProgressBy
				if deadline.IsZero() && d.CreateTime != 0 {
					deadline = time.Unix(0, d.CreateTime).Add(s.ProgressDeadline)
				}
				if s.ProgressDeadline == 0 || deadline.IsZero() || obs.Now.Before(deadline) {
					continue
				}
				if !referenceExempt(obs, name, s) {
					t.Fatalf("case %d: running past group %s's deadline (%v, now %v): %+v\n%v",
						i, name, deadline, obs.Now, s, dec)
				}
			}
		}
		if !dec.WakeAt.IsZero() && !dec.WakeAt.After(obs.Now) {
			t.Fatalf("case %d: WakeAt %v not after now %v", i, dec.WakeAt, obs.Now)
		}
		if !dec.WakeAt.IsZero() && status != structs.DeploymentStatusRunning {
			t.Fatalf("case %d: WakeAt set for a %s deployment", i, status)
		}
		if dec.Fail && (!dec.CreateEval || dec.Status != structs.DeploymentStatusFailed) {
			t.Fatalf("case %d: failure without eval or status: %v", i, dec)
		}
		if dec.Promote {
			for _, name := range dec.PromoteGroups {
				s := d.TaskGroups[name]
				if !s.AutoPromote || !referenceExempt(obs, name, s) {
					t.Fatalf("case %d: promoted group %s that is not auto_promote with healthy canaries", i, name)
				}
			}
		}
		if dec.Stable && dec.Status != structs.DeploymentStatusSuccessful {
			t.Fatalf("case %d: stable without success", i)
		}
	}
}

// FuzzDecide feeds Decide random observations derived from the fuzzer's
// seed: it must never panic and never return a WakeAt in the past.
func FuzzDecide(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(7), uint64(99))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		obs := randomObservation(rand.New(rand.NewPCG(a, b)))
		dec := Decide(obs)
		if !dec.WakeAt.IsZero() && !dec.WakeAt.After(obs.Now) {
			t.Fatalf("WakeAt %v not after now %v", dec.WakeAt, obs.Now)
		}
	})
}

// TestDecideNilInputs: nil pieces of an observation never panic.
func TestDecideNilInputs(t *testing.T) {
	d := &structs.Deployment{ID: "d1", Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": nil, "api": {DesiredTotal: 1}}}
	for _, obs := range []Observation{
		{},
		{Deployment: d},
		{Deployment: d, LatestJob: &structs.Job{}, Allocs: []*structs.Allocation{nil, {TaskGroup: "api", DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: boolp(false)}}}},
	} {
		_ = Decide(obs)
	}
}

// BenchmarkDecide measures one decision for a deployment of 3 groups and
// 300 allocations.
func BenchmarkDecide(b *testing.B) {
	job := &structs.Job{ID: "web", Version: 2}
	d := &structs.Deployment{ID: "d1", JobVersion: 2, Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{}}
	var allocs []*structs.Allocation
	for g := range 3 {
		name := fmt.Sprintf("g%d", g)
		d.TaskGroups[name] = &structs.DeploymentState{DesiredTotal: 200, ProgressDeadline: 10 * time.Minute, RequireProgressBy: t0.Add(10 * time.Minute)}
		job.TaskGroups = append(job.TaskGroups, &structs.TaskGroup{Name: name, ReschedulePolicy: &structs.ReschedulePolicy{Unlimited: true}})
		for i := range 100 {
			allocs = append(allocs, &structs.Allocation{ID: fmt.Sprintf("%s-%d", name, i), TaskGroup: name, Job: job,
				DesiredStatus: structs.AllocDesiredStatusRun, DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: boolp(i%10 != 0)}})
		}
	}
	obs := Observation{Deployment: d, Job: job, LatestJob: job, Allocs: allocs, Now: t0.Add(time.Minute)}
	b.ReportAllocs()
	for b.Loop() {
		_ = Decide(obs)
	}
}
