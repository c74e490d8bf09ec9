package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// randomWorld builds a random but well-formed snapshot: a job at version 1
// (its version 0 still running in places), nodes in every state, allocs of
// both versions in every client state, and maybe a deployment.
func randomWorld(r *rand.Rand) Input {
	types := []string{structs.JobTypeService, structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch}
	typ := types[r.IntN(len(types))]
	mkJob := func(v uint64, config string, count, mp, canary int) *structs.Job {
		j := baseJob()
		j.Type = typ
		j.Version = v
		tg := j.TaskGroups[0]
		tg.Count = count
		tg.Tasks[0].Config = map[string]any{"v": config}
		tg.Tasks[0].Resources = &structs.Resources{CPU: 500, MemoryMB: 1024}
		tg.ReschedulePolicy = structs.DefaultReschedulePolicy(typ)
		if r.IntN(2) == 0 {
			tg.ReschedulePolicy = &structs.ReschedulePolicy{Attempts: 2, Interval: time.Hour, Delay: time.Duration(r.IntN(3)) * 10 * time.Second, DelayFunction: structs.DelayFunctionConstant}
		}
		if structs.RunsToCompletion(typ) {
			tg.Update = nil
		} else {
			tg.Update.MaxParallel = mp
			if typ == structs.JobTypeService && mp > 0 {
				tg.Update.Canary = canary
			}
		}
		return j
	}
	count := r.IntN(7)
	mp := r.IntN(4)
	canary := 0
	if r.IntN(3) == 0 {
		canary = 1 + r.IntN(2)
	}
	configs := []string{"a", "a", "b"}
	old := mkJob(0, "a", r.IntN(7), 1, 0)
	job := mkJob(1, configs[r.IntN(3)], count, mp, canary)
	if r.IntN(2) == 0 {
		job.Meta["x"] = "changed"
	}
	job.Stop = r.IntN(15) == 0
	canary = 0
	if u := job.TaskGroups[0].Update; u != nil {
		canary = u.Canary
	}

	var nodeList []*structs.Node
	statuses := []string{"ready", "ready", "ready", "down", "drain", "ineligible"}
	for i := range 1 + r.IntN(6) {
		n := testNode(fmt.Sprintf("n%d", i), statuses[r.IntN(len(statuses))])
		n.NodeResources.Memory.MemoryMB = int64(1024 * (1 + r.IntN(4)))
		nodeList = append(nodeList, n)
	}

	var dep *structs.Deployment
	if r.IntN(2) == 0 {
		ds := []string{structs.DeploymentStatusRunning, structs.DeploymentStatusRunning, structs.DeploymentStatusPaused,
			structs.DeploymentStatusFailed, structs.DeploymentStatusSuccessful, structs.DeploymentStatusCancelled}
		dep = &structs.Deployment{
			ID: "d1", JobID: "example", JobVersion: uint64(r.IntN(2)), JobCreateIndex: 1,
			Status: ds[r.IntN(len(ds))],
			TaskGroups: map[string]*structs.DeploymentState{"web": {
				DesiredTotal: count, DesiredCanaries: canary, Promoted: canary > 0 && r.IntN(2) == 0,
			}},
		}
	}

	var allocs []*structs.Allocation
	clients := []string{"running", "running", "running", "pending", "complete", "failed", "lost"}
	canaryIdx := map[int]bool{}
	for i := 0; i < 8; i++ {
		if r.IntN(3) == 0 {
			continue
		}
		j := old
		if r.IntN(2) == 0 {
			j = job
		}
		node := nodeList[r.IntN(len(nodeList))]
		a := &structs.Allocation{
			ID: fmt.Sprintf("a%d", i), Name: structs.AllocName("example", "web", i), JobID: "example", Job: j,
			TaskGroup: "web", NodeID: node.ID, NodeName: node.Name, DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: clients[r.IntN(len(clients))], ModifyTime: baseTime.Add(-time.Minute).UnixNano(),
			AllocatedResources: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
				"main": {Cpu: structs.AllocatedCpuResources{CpuShares: 500}, Memory: structs.AllocatedMemoryResources{MemoryMB: 1024}},
			}},
		}
		if structs.PerNode(typ) {
			a.Name = structs.AllocName("example", "web", 0)
		}
		if r.IntN(6) == 0 {
			a.DesiredStatus = structs.AllocDesiredStatusStop
		}
		if dep != nil && j == job && r.IntN(2) == 0 {
			a.DeploymentID = dep.ID
			a.DeploymentStatus = &structs.AllocDeploymentStatus{}
			if h := r.IntN(3); h > 0 {
				b := h == 1
				a.DeploymentStatus.Healthy = &b
			}
			if typ == structs.JobTypeService && len(canaryIdx) < canary && !canaryIdx[i] && r.IntN(2) == 0 {
				canaryIdx[i] = true
				a.DeploymentStatus.Canary = true
			}
		}
		if r.IntN(8) == 0 {
			yes := true
			a.DesiredTransition.Reschedule = &yes
		}
		if r.IntN(8) == 0 {
			// Marked by the drainer, on any node (a drain may have
			// been cancelled or its deadline passed).
			yes := true
			a.DesiredTransition.Migrate = &yes
		}
		allocs = append(allocs, a)
	}
	n := 0
	return Input{
		Job: job, Allocs: allocs, Deployment: dep, Nodes: nodeList, Now: baseTime,
		IDs: func() string { n++; return fmt.Sprintf("id%d", n) }, EvalID: "eval",
	}
}

// referenceBudget is the dumb statement of the budget rule: max_parallel
// minus the deployment's allocs of unknown health; zero with any unhealthy
// one or when the deployment is not running.
func referenceBudget(in Input) int {
	tg := in.Job.TaskGroups[0]
	if !tg.Update.Rolling() {
		return 1 << 30
	}
	d := in.Deployment
	current := d != nil && d.JobVersion == in.Job.Version
	if current && (d.Status == structs.DeploymentStatusPaused || d.Status == structs.DeploymentStatusFailed) {
		return 0
	}
	limit := tg.Update.MaxParallel
	if current && d.Active() {
		for _, a := range in.Allocs {
			if a.DeploymentID != d.ID || a.TerminalStatus() || a.Index() >= tg.Count {
				// An alloc above the count is scaled away in this pass:
				// its health holds nothing back.
				continue
			}
			if a.IsUnhealthy() {
				return 0
			}
			if !a.IsHealthy() {
				limit--
			}
		}
	}
	return max(0, limit)
}

func TestReconcileProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		in := randomWorld(r)
		plan := Reconcile(in)
		if err := checkPlan(in, plan); err != nil {
			t.Fatalf("case %d: %v\ninput:\n%s\nplan:\n%s", i, err, dumpInput(in), plan)
		}
		destructive := 0
		for _, p := range plan.Place {
			if p.ReplaceDescription == structs.AllocUpdating {
				destructive++
			}
		}
		if ref := referenceBudget(in); destructive > ref && in.Job.Type != structs.JobTypeSystem {
			t.Fatalf("case %d: %d destructive updates, budget %d\nplan:\n%s", i, destructive, ref, plan)
		}
		// Determinism: the same input gives the same plan.
		n := 0
		in.IDs = func() string { n++; return fmt.Sprintf("id%d", n) }
		if again := Reconcile(in); again.String() != plan.String() {
			t.Fatalf("case %d: plans differ:\n%s\n%s", i, plan, again)
		}
		checkPlacement(t, i, in, plan)
	}
}

// checkPlacement places the plan and asserts no alloc lands on an unusable
// node and no node ends over its resources.
func checkPlacement(t *testing.T, i int, in Input, plan *Plan) {
	t.Helper()
	if in.Job.Stopped() {
		return
	}
	res := NewPlacer(in.Nodes, in.Allocs, uint64(i)).Place(in.Job, plan, in.Now)
	nodes := map[string]*structs.Node{}
	for _, n := range in.Nodes {
		nodes[n.ID] = n
	}
	gone := map[string]bool{}
	for _, s := range plan.Stop {
		gone[s.Alloc.ID] = true
	}
	for _, a := range res.Allocs {
		if !nodes[a.NodeID].Ready() {
			t.Fatalf("case %d: alloc %s placed on unusable node %s", i, a.Name, a.NodeID)
		}
		if a.PreviousAllocation != "" {
			for _, p := range plan.Place {
				if p.AllocID == a.ID && p.Replaces != "" {
					gone[p.Replaces] = true
				}
			}
		}
	}
	used := map[string]structs.ComparableResources{}
	for _, a := range append(append([]*structs.Allocation{}, in.Allocs...), res.Allocs...) {
		if a.TerminalStatus() || gone[a.ID] || nodes[a.NodeID] == nil {
			continue
		}
		u := used[a.NodeID]
		u.Add(a.AllocatedResources.Comparable())
		used[a.NodeID] = u
	}
	for id, u := range used {
		// Existing allocs may already overcommit a node in a random world;
		// only new placements must not push it over.
		placedHere := false
		for _, a := range res.Allocs {
			placedHere = placedHere || a.NodeID == id
		}
		if ok, dim := u.Fits(nodes[id].Capacity()); placedHere && !ok {
			t.Fatalf("case %d: node %s over its %s", i, id, dim)
		}
	}
}

func dumpInput(in Input) string {
	s := fmt.Sprintf("job type=%s version=%d stop=%t count=%d update=%+v\n", in.Job.Type, in.Job.Version, in.Job.Stop,
		in.Job.TaskGroups[0].Count, in.Job.TaskGroups[0].Update)
	if d := in.Deployment; d != nil {
		s += fmt.Sprintf("deployment version=%d status=%s state=%+v\n", d.JobVersion, d.Status, *d.TaskGroups["web"])
	}
	for _, n := range in.Nodes {
		s += fmt.Sprintf("node %s status=%s drain=%t elig=%s\n", n.ID, n.Status, n.Drain, n.SchedulingEligibility)
	}
	for _, a := range in.Allocs {
		s += fmt.Sprintf("alloc %s %s v%d node=%s desired=%s client=%s dep=%q canary=%t healthy=%t unhealthy=%t resched=%t migrate=%t\n",
			a.ID, a.Name, a.JobVersion(), a.NodeID, a.DesiredStatus, a.ClientStatus, a.DeploymentID, a.IsCanary(),
			a.IsHealthy(), a.IsUnhealthy(), a.DesiredTransition.ShouldReschedule(), a.DesiredTransition.ShouldMigrate())
	}
	return s
}
