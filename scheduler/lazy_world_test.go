package scheduler

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/droverhq/drover/structs"
)

// clusterWorld is a random cluster for comparing the eager and the lazy
// placer: the job's input (its allocs in ID order, as the store gives
// them) and every other alloc of the cluster.
type clusterWorld struct {
	in     Input
	others []*structs.Allocation
}

// all returns every alloc of the cluster: the job's and the others.
func (w *clusterWorld) all() []*structs.Allocation {
	return append(append([]*structs.Allocation{}, w.in.Allocs...), w.others...)
}

// byNode groups all allocs by node, as the store's node index does.
func (w *clusterWorld) byNode() map[string][]*structs.Allocation {
	m := map[string][]*structs.Allocation{}
	for _, a := range w.all() {
		m[a.NodeID] = append(m[a.NodeID], a)
	}
	return m
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// randomNode is a node of varied capacity, state, datacenter, rack,
// class, driver kernel, reserved and dynamic ports.
func randomNode(r *rand.Rand, i int) *structs.Node {
	n := testNode(fmt.Sprintf("n%02d", i), pick(r, "ready", "ready", "ready", "ready", "down", "drain", "ineligible"))
	n.NodeResources.Cpu.CpuShares = int64(1000 * (1 + r.IntN(8)))
	n.NodeResources.Memory.MemoryMB = int64(1024 * (1 + r.IntN(12)))
	n.Datacenter = pick(r, "dc1", "dc1", "dc2", "dc3")
	n.NodeClass = pick(r, "", "c1", "c2")
	n.Attributes["unique.network.ip-address"] = fmt.Sprintf("10.0.0.%d", i)
	if r.IntN(5) == 0 {
		n.Attributes["kernel.name"] = "windows"
	}
	if r.IntN(6) > 0 {
		n.Meta = map[string]string{"rack": pick(r, "r1", "r2", "r3", "r4")}
	}
	if r.IntN(3) == 0 {
		n.NodeResources.MinDynamicPort = 20000
		n.NodeResources.MaxDynamicPort = 20000 + r.IntN(6)
	}
	if r.IntN(4) == 0 {
		n.ReservedResources = &structs.NodeReservedResources{
			Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: pick(r, "8080", "20000-20002", "22,8080")},
		}
	}
	return n
}

// randomGroup shapes one group: count, resources, ports, distinct hosts
// and spread, all optional.
func randomGroup(r *rand.Rand, tg *structs.TaskGroup, typ string) {
	tg.Count = r.IntN(14)
	tg.Tasks[0].Resources = &structs.Resources{CPU: 100 * (1 + r.IntN(15)), MemoryMB: 128 * (1 + r.IntN(24))}
	tg.EphemeralDisk.SizeMB = 100
	// A sticky disk sends replacements back to their node first.
	tg.EphemeralDisk.Sticky = r.IntN(3) == 0
	switch r.IntN(4) {
	case 0:
		tg.Networks = []*structs.NetworkResource{{ReservedPorts: []structs.Port{{Label: "http", Value: 8080}}}}
	case 1:
		tg.Networks = []*structs.NetworkResource{{DynamicPorts: []structs.Port{{Label: "a"}, {Label: "b", To: -1}}}}
	}
	if r.IntN(4) == 0 {
		tg.Constraints = append(tg.Constraints, &structs.Constraint{Operand: structs.ConstraintDistinctHosts, RTarget: "true"})
	}
	if r.IntN(3) == 0 {
		sp := &structs.Spread{Attribute: "${meta.rack}", Weight: int8(r.IntN(101))}
		if r.IntN(2) == 0 {
			sp.SpreadTarget = []*structs.SpreadTarget{{Value: "r1", Percent: 50}, {Value: "r2", Percent: 30}}
		}
		tg.Spreads = append(tg.Spreads, sp)
	}
	if typ == structs.JobTypeService {
		tg.Update.MaxParallel = r.IntN(6)
		if tg.Update.MaxParallel > 0 && r.IntN(5) == 0 {
			tg.Update.Canary = 1
		}
	}
}

// randomAlloc is a live or finished alloc of job's group on node, holding
// resources and maybe ports.
func randomAlloc(r *rand.Rand, id string, job *structs.Job, group string, idx int, node string) *structs.Allocation {
	a := &structs.Allocation{
		ID: id, Namespace: job.Namespace, Name: structs.AllocName(job.ID, group, idx), JobID: job.ID, Job: job,
		TaskGroup: group, NodeID: node, NodeName: node,
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  pick(r, "running", "running", "running", "running", "pending", "complete", "failed", "lost"),
		ModifyTime:    baseTime.Add(-time.Minute).UnixNano(),
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{"main": {
				Cpu:    structs.AllocatedCpuResources{CpuShares: int64(100 * (1 + r.IntN(10)))},
				Memory: structs.AllocatedMemoryResources{MemoryMB: int64(128 * (1 + r.IntN(16)))},
			}},
			Shared: structs.AllocatedSharedResources{DiskMB: 100},
		},
	}
	if r.IntN(8) == 0 {
		a.DesiredStatus = structs.AllocDesiredStatusStop
	}
	if r.IntN(3) == 0 {
		// Ports that may collide with the node's reservation, with other
		// allocs and with the group's static port.
		a.AllocatedResources.Shared.Ports = []structs.PortMapping{{Label: "p", Value: pick(r, 8080, 20000, 20001, 20003)}}
	}
	if r.IntN(10) == 0 {
		yes := true
		a.DesiredTransition.Reschedule = &yes
	}
	return a
}

// randomCluster builds a random cluster: up to 40 nodes, a service or
// system job at version 1 with allocs of versions 0 and 1 (so the plan
// stops, replaces, reschedules and pins), and allocs of other jobs,
// including one with the same job ID in another namespace.
func randomCluster(r *rand.Rand) *clusterWorld {
	var ns []*structs.Node
	for i := range 1 + r.IntN(40) {
		ns = append(ns, randomNode(r, i))
	}
	typ := pick(r, structs.JobTypeService, structs.JobTypeService, structs.JobTypeService, structs.JobTypeSystem)
	job := baseJob()
	job.Type = typ
	job.Namespace = structs.DefaultNamespace
	job.Datacenters = pick(r, []string{"dc1"}, []string{"dc1", "dc2"}, []string{"dc*"})
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	if r.IntN(5) == 0 {
		job.Constraints = append(job.Constraints, &structs.Constraint{Operand: structs.ConstraintDistinctHosts})
	}
	if r.IntN(2) == 0 {
		second := job.TaskGroups[0].Copy()
		second.Name = "api"
		job.TaskGroups = append(job.TaskGroups, second)
	}
	for _, tg := range job.TaskGroups {
		tg.ReschedulePolicy = structs.DefaultReschedulePolicy(typ)
		randomGroup(r, tg, typ)
	}
	old := job.Copy()
	job.Version = 1
	if r.IntN(3) > 0 {
		for _, tg := range job.TaskGroups {
			tg.Tasks[0].Env = map[string]string{"V": "2"}
		}
	}

	nodeID := func() string {
		if r.IntN(20) == 0 {
			return "gone"
		}
		return ns[r.IntN(len(ns))].ID
	}
	w := &clusterWorld{}
	ids := r.Perm(60)
	k := 0
	for _, tg := range job.TaskGroups {
		for i := range tg.Count + r.IntN(4) {
			if r.IntN(4) == 0 || k == len(ids) {
				continue
			}
			v := pick(r, old, job)
			w.in.Allocs = append(w.in.Allocs, randomAlloc(r, fmt.Sprintf("j%02d", ids[k]), v, tg.Name, i, nodeID()))
			k++
		}
	}
	sortAllocsByID(w.in.Allocs)

	other := baseJob()
	other.Namespace = structs.DefaultNamespace
	for i := range r.IntN(120) {
		j := other.Copy()
		j.ID = fmt.Sprintf("other%d", r.IntN(3))
		if r.IntN(10) == 0 {
			j.ID = job.ID
			j.Namespace = "prod"
		}
		w.others = append(w.others, randomAlloc(r, fmt.Sprintf("o%03d", i), j, "web", i, nodeID()))
	}
	n := 0
	w.in = Input{
		Job: job, Allocs: w.in.Allocs, Nodes: ns, Now: baseTime, EvalID: "eval",
		IDs: func() string { n++; return fmt.Sprintf("new%03d", n) },
	}
	return w
}

func sortAllocsByID(as []*structs.Allocation) {
	sort.Slice(as, func(i, j int) bool { return as[i].ID < as[j].ID })
}
