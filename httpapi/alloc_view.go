package httpapi

import (
	"sort"

	"github.com/droverhq/drover/structs"
)

// allocView is an allocation as Nomad's full allocation answers carry it:
// with Resources, the legacy sum of its tasks' resources and its shared
// disk, and TaskResources, each task's legacy share. Nomad always fills
// both: the nomad CLI's `node status <id>` dereferences Resources' CPU,
// MemoryMB and DiskMB for every running alloc of the node, and `alloc
// status` shows a task's resources from TaskResources (and the disk from
// Resources). Both are computed from AllocatedResources on each read,
// never stored.
type allocView struct {
	*structs.Allocation
	// Job, when the alloc carries one, as the job answers write it.
	Job           *jobView
	Resources     *allocResources
	TaskResources map[string]*allocResources
}

// allocResources is Nomad's api.Resources as its server always writes it:
// every number present, zero or not.
type allocResources struct {
	CPU         int
	Cores       int
	MemoryMB    int
	MemoryMaxMB int
	DiskMB      int
	IOPS        int
}

// viewAlloc returns a's answer form. A task's MemoryMaxMB is its limit (0
// when it sets none); the sum counts a task's MemoryMB when it has none (as
// Nomad's Resources.Add).
func viewAlloc(a *structs.Allocation) *allocView {
	r := &allocResources{}
	tasks := map[string]*allocResources{}
	if ar := a.AllocatedResources; ar != nil {
		for name, t := range ar.Tasks {
			if t == nil {
				continue
			}
			tasks[name] = &allocResources{CPU: int(t.Cpu.CpuShares), MemoryMB: int(t.Memory.MemoryMB),
				MemoryMaxMB: int(t.Memory.MemoryMaxMB)}
			r.CPU += int(t.Cpu.CpuShares)
			r.MemoryMB += int(t.Memory.MemoryMB)
			r.MemoryMaxMB += int(max(t.Memory.MemoryMaxMB, t.Memory.MemoryMB))
		}
		r.DiskMB = int(ar.Shared.DiskMB)
	}
	return &allocView{Allocation: a, Job: viewJob(a.Job), Resources: r, TaskResources: tasks}
}

// viewAllocs returns the answer forms of allocs, by ID, never nil.
func viewAllocs(allocs []*structs.Allocation) []*allocView {
	out := make([]*allocView, 0, len(allocs))
	for _, a := range allocs {
		out = append(out, viewAlloc(a))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
