package stateview

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// BenchmarkWatcherPass measures one watcher pass (read, decide, no write)
// over 100 active deployments of 20 healthy allocations each (of 30
// desired), read from the real store.
func BenchmarkWatcherPass(b *testing.B) {
	benchWatcherPass(b, 100, 30, 20, 20)
}

// BenchmarkWatcherPassLarge measures one watcher pass (read, decide, no
// write) over one active deployment of 10,000 allocations, 5,000 of them
// healthy, read from the real store: the shape of a large rollout half
// way through.
func BenchmarkWatcherPassLarge(b *testing.B) {
	benchWatcherPass(b, 1, 10000, 10000, 5000)
}

// benchWatcherPass sets up deployments running jobs of desired allocs,
// placed of them placed and healthy of those reported healthy, and
// measures one watcher pass over them once the first pass has asked
// for its evaluations; a steady-state pass writes nothing.
func benchWatcherPass(b *testing.B, deployments, desired, placedN, healthy int) {
	s, err := state.New()
	if err != nil {
		b.Fatal(err)
	}
	w := &storeWriter{s: s}
	now := time.Now()
	yes := true
	for i := range deployments {
		job := &structs.Job{ID: fmt.Sprintf("job-%d", i), Namespace: "default", Type: structs.JobTypeService,
			Priority: 50, TaskGroups: []*structs.TaskGroup{{Name: "web", Count: desired,
				ReschedulePolicy: &structs.ReschedulePolicy{Unlimited: true}}}}
		if _, err := s.RegisterJob(w.next("setup"), &structs.JobRegisterRequest{Job: job,
			Eval: &structs.Evaluation{ID: "e-" + job.ID, Namespace: "default", JobID: job.ID}}); err != nil {
			b.Fatal(err)
		}
		d := &structs.Deployment{ID: "d-" + job.ID, Namespace: "default", JobID: job.ID,
			Status: structs.DeploymentStatusRunning, StatusDescription: structs.DeploymentStatusDescriptionRunning,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: desired, ProgressDeadline: time.Hour}}}
		var placed, health []*structs.Allocation
		for a := range placedN {
			id := fmt.Sprintf("%s-a%05d", d.ID, a)
			placed = append(placed, &structs.Allocation{ID: id, Namespace: "default", JobID: job.ID,
				TaskGroup: "web", NodeID: "n1", Name: structs.AllocName(job.ID, "web", a), DeploymentID: d.ID,
				DesiredStatus: structs.AllocDesiredStatusRun, DeploymentStatus: &structs.AllocDeploymentStatus{}})
			if a < healthy {
				health = append(health, &structs.Allocation{ID: id, ClientStatus: structs.AllocClientStatusRunning,
					DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes}})
			}
		}
		if err := s.ApplyPlanResults(w.next("setup"), &structs.ApplyPlanResultsRequest{EvalID: "e-" + job.ID,
			Job: job, AllocsPlaced: placed, Deployment: d, UpdatedAt: now.UnixNano()}); err != nil {
			b.Fatal(err)
		}
		if err := s.UpdateAllocsFromClient(w.next("setup"), &structs.AllocClientUpdateRequest{
			Allocs: health, UpdatedAt: now.UnixNano()}); err != nil {
			b.Fatal(err)
		}
	}
	watcher, err := deployment.NewWatcher(deployment.Config{State: New(w.store), Writer: w})
	if err != nil {
		b.Fatal(err)
	}
	watcher.RunOnce(b.Context()) // the first pass writes the health evals
	before := len(w.writes())
	b.ReportAllocs()
	for b.Loop() {
		if wake := watcher.RunOnce(b.Context()); wake.IsZero() {
			b.Fatal("no wake time")
		}
	}
	if n := len(w.writes()); n != before {
		b.Fatalf("%d writes in steady state", n-before)
	}
}
