package structs

// Resources a task asks for.
type Resources struct {
	CPU      int
	Cores    int `json:",omitempty"`
	MemoryMB int
	// MemoryMaxMB is Nomad's oversubscription limit: the hard limit when
	// above MemoryMB, none at all when MemoryMaxUnlimited (-1).
	MemoryMaxMB int                `json:",omitempty"`
	DiskMB      int                `json:",omitempty"`
	Networks    []*NetworkResource `json:",omitempty"`
}

// MemoryMaxUnlimited is the memory_max that sets no hard memory limit, as
// Nomad's memory_max = -1: the task may use all the node's memory; the
// scheduler still reserves memory.
const MemoryMaxUnlimited = -1

// DefaultResources returns Nomad's task defaults: 100 MHz and 300 MB.
func DefaultResources() *Resources {
	return &Resources{CPU: DefaultTaskCPU, MemoryMB: DefaultTaskMemoryMB}
}

// Copy returns a deep copy.
func (r *Resources) Copy() *Resources {
	if r == nil {
		return nil
	}
	c := *r
	c.Networks = copyNetworks(r.Networks)
	return &c
}

// ComparableResources is the sum a placement needs or a node offers.
type ComparableResources struct {
	CPU      int64
	MemoryMB int64
	DiskMB   int64
}

// Add adds o to r.
func (r *ComparableResources) Add(o ComparableResources) {
	r.CPU += o.CPU
	r.MemoryMB += o.MemoryMB
	r.DiskMB += o.DiskMB
}

// Fits reports whether r fits within capacity, and if not, names the first
// exhausted dimension ("cpu", "memory", "disk") as Nomad's metrics do.
func (r ComparableResources) Fits(capacity ComparableResources) (bool, string) {
	switch {
	case r.CPU > capacity.CPU:
		return false, "cpu"
	case r.MemoryMB > capacity.MemoryMB:
		return false, "memory"
	case r.DiskMB > capacity.DiskMB:
		return false, "disk"
	}
	return true, ""
}

// GroupResources sums what one allocation of the group needs.
func (tg *TaskGroup) GroupResources() ComparableResources {
	var c ComparableResources
	for _, t := range tg.Tasks {
		if t.Resources != nil {
			c.CPU += int64(t.Resources.CPU)
			c.MemoryMB += int64(t.Resources.MemoryMB)
		}
	}
	if tg.EphemeralDisk != nil {
		c.DiskMB = int64(tg.EphemeralDisk.SizeMB)
	}
	return c
}
