package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// Sentinel errors of the client's endpoints.
var (
	// ErrAllocNotHeld: the client does not hold the allocation.
	ErrAllocNotHeld = errors.New("unknown allocation")
	// ErrUnknownTask: the allocation's group has no such task.
	ErrUnknownTask = errors.New("unknown task")
)

// statsTimeout bounds one driver's sample.
const statsTimeout = 10 * time.Second

// rateWindow is the shortest interval the client turns into rates when it
// has a choice: two samples taken a moment apart say little about CPU
// use. Nomad samples every second.
const rateWindow = time.Second

// maxSamples bounds the samples kept per task (or host).
const maxSamples = 8

// AllocStats samples the resource usage of the allocation's tasks (only
// task when it is not empty) and returns it in Nomad's shape, the
// allocation's usage being the sum of its tasks'. A task that is not
// running reports its last sample, or nothing measured if it never had
// one; so does a task whose driver cannot measure it. It returns an error
// wrapping ErrAllocNotHeld or ErrUnknownTask.
func (a *Agent) AllocStats(ctx context.Context, allocID, task string) (*structs.AllocResourceUsage, error) {
	a.mu.Lock()
	e := a.allocs[allocID]
	a.mu.Unlock()
	if e == nil {
		return nil, fmt.Errorf("%w %q", ErrAllocNotHeld, allocID)
	}
	e.mu.Lock()
	alloc := e.alloc
	e.mu.Unlock()
	var names []string
	if alloc != nil && alloc.Job != nil {
		if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
			for _, t := range tg.Tasks {
				names = append(names, t.Name)
			}
		}
	}
	if task != "" {
		if !slices.Contains(names, task) {
			return nil, fmt.Errorf("%w %q in allocation %q", ErrUnknownTask, task, allocID)
		}
		names = []string{task}
	}
	a.usage.forget(a.holds)
	out := &structs.AllocResourceUsage{ResourceUsage: emptyUsage(), Tasks: make(map[string]*structs.TaskResourceUsage, len(names))}
	for _, name := range names {
		tu := a.taskStats(ctx, e, name)
		out.Tasks[name] = tu
		out.ResourceUsage.Add(tu.ResourceUsage)
		out.Timestamp = max(out.Timestamp, tu.Timestamp)
	}
	return out, nil
}

// holds reports whether the client still holds the allocation.
func (a *Agent) holds(allocID string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.allocs[allocID] != nil
}

// taskStats samples one task, or falls back on its last answer.
func (a *Agent) taskStats(ctx context.Context, e *allocEntry, task string) *structs.TaskResourceUsage {
	id := drivers.TaskID(e.id, task)
	if e.runner == nil {
		return a.usage.last(id)
	}
	ctx, cancel := context.WithTimeout(ctx, statsTimeout)
	defer cancel()
	u, startedAt, err := e.runner.TaskUsage(ctx, task)
	switch {
	case err == nil && u != nil:
		return a.usage.record(id, u, startedAt, a.mhzPerCore())
	case errors.Is(err, drivers.ErrStatsNotSupported):
		// Nothing measured, but the task runs: say when it was asked.
		tu := emptyTaskUsage()
		tu.Timestamp = a.clock.Now().UnixNano()
		return tu
	case err != nil && !errors.Is(err, drivers.ErrTaskNotFound):
		a.logger.Debug("sampling a task's resource usage", "alloc_id", e.id, "task", task, "error", err)
	}
	return a.usage.last(id)
}

// mhzPerCore is the speed of one of the node's cores, from its
// fingerprint: the unit of a task's TotalTicks.
func (a *Agent) mhzPerCore() float64 {
	r := a.node.NodeResources
	if r == nil || r.Cpu.CpuShares <= 0 {
		return 0
	}
	return float64(r.Cpu.CpuShares) / float64(max(r.Cpu.TotalCpuCores, 1))
}

// emptyUsage is a usage with nothing measured.
func emptyUsage() *structs.ResourceUsage {
	return &structs.ResourceUsage{
		MemoryStats: &structs.MemoryStats{Measured: []string{}},
		CpuStats:    &structs.CpuStats{Measured: []string{}},
	}
}

func emptyTaskUsage() *structs.TaskResourceUsage {
	return &structs.TaskResourceUsage{ResourceUsage: emptyUsage(), Pids: map[string]*structs.ResourceUsage{}}
}

// usageCache keeps each task's recent samples, to turn CPU times into
// rates, and its last answer, for when the task stops running.
type usageCache struct {
	mu    sync.Mutex
	tasks map[string]*taskSamples // by drivers.TaskID
}

type taskSamples struct {
	// startedAt is the start of the handle the samples are of; a task
	// restarted under a new handle starts counting again.
	startedAt time.Time
	samples   []*drivers.TaskUsage // oldest first
	answer    *structs.TaskResourceUsage
}

func newUsageCache() *usageCache { return &usageCache{tasks: map[string]*taskSamples{}} }

// last returns the task's last answer, or one with nothing measured.
func (c *usageCache) last(id string) *structs.TaskResourceUsage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ts := c.tasks[id]; ts != nil && ts.answer != nil {
		return ts.answer
	}
	return emptyTaskUsage()
}

// forget drops the samples of allocations the client no longer holds.
func (c *usageCache) forget(held func(allocID string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.tasks {
		allocID, _, _ := strings.Cut(id, "/")
		if !held(allocID) {
			delete(c.tasks, id)
		}
	}
}

// record adds a sample and returns the task's usage in Nomad's shape.
func (c *usageCache) record(id string, u *drivers.TaskUsage, startedAt time.Time, mhzPerCore float64) *structs.TaskResourceUsage {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.tasks[id]
	if ts == nil || !ts.startedAt.Equal(startedAt) {
		ts = &taskSamples{startedAt: startedAt}
		c.tasks[id] = ts
	}
	base := ts.pick(u)
	ts.answer = taskResourceUsage(u, base, startedAt, mhzPerCore)
	return ts.answer
}

// pick chooses the sample to measure rates against: the newest one at
// least rateWindow older than u, else the oldest one kept; nil for none
// (the rates are then averages since the task started). It then keeps u
// and drops the samples older than the one chosen.
func (ts *taskSamples) pick(u *drivers.TaskUsage) *drivers.TaskUsage {
	// Samples from later than u, or with more CPU time than u, are of
	// something else: start again.
	kept := ts.samples[:0]
	for _, s := range ts.samples {
		if s.Timestamp.Before(u.Timestamp) && s.CPU.Total <= u.CPU.Total {
			kept = append(kept, s)
		}
	}
	ts.samples = kept
	var base *drivers.TaskUsage
	at := -1
	for i, s := range ts.samples {
		if u.Timestamp.Sub(s.Timestamp) >= rateWindow {
			base, at = s, i
		}
	}
	if base == nil && len(ts.samples) > 0 {
		base, at = ts.samples[0], 0
	}
	if at > 0 {
		ts.samples = ts.samples[at:]
	}
	ts.samples = append(ts.samples, u)
	if len(ts.samples) > maxSamples {
		ts.samples = ts.samples[len(ts.samples)-maxSamples:]
	}
	return base
}

// taskResourceUsage turns a sample into Nomad's shape: memory as
// measured, CPU times into percentages of one core since base (since the
// task started when base is nil) and TotalTicks into MHz.
func taskResourceUsage(u, base *drivers.TaskUsage, startedAt time.Time, mhzPerCore float64) *structs.TaskResourceUsage {
	var baseUsage drivers.Usage
	baseAt := startedAt
	var basePids map[string]*drivers.ProcessUsage
	if base != nil {
		baseUsage, baseAt, basePids = base.Usage, base.Timestamp, base.Pids
	}
	out := &structs.TaskResourceUsage{
		ResourceUsage: resourceUsage(u.Usage, baseUsage, u.Timestamp.Sub(baseAt), mhzPerCore),
		Timestamp:     u.Timestamp.UnixNano(),
		Pids:          make(map[string]*structs.ResourceUsage, len(u.Pids)),
	}
	for pid, p := range u.Pids {
		// The same process in the base sample (same PID, same start), or
		// none: its CPU time then counts from its start.
		var pb drivers.Usage
		pAt := p.StartedAt
		if bp := basePids[pid]; bp != nil && bp.StartedAt.Equal(p.StartedAt) {
			pb, pAt = bp.Usage, baseAt
		}
		out.Pids[pid] = resourceUsage(p.Usage, pb, u.Timestamp.Sub(pAt), mhzPerCore)
	}
	return out
}

// resourceUsage is one usage in Nomad's shape, CPU rates measured over
// wall.
func resourceUsage(u, base drivers.Usage, wall time.Duration, mhzPerCore float64) *structs.ResourceUsage {
	m := u.Memory
	out := &structs.ResourceUsage{
		MemoryStats: &structs.MemoryStats{
			RSS: m.RSS, Cache: m.Cache, Swap: m.Swap, Usage: m.Usage, MaxUsage: m.MaxUsage,
			KernelUsage: m.KernelUsage, KernelMaxUsage: m.KernelMaxUsage,
			Measured: append([]string{}, m.Measured...),
		},
		CpuStats: &structs.CpuStats{
			ThrottledPeriods: u.CPU.ThrottledPeriods,
			ThrottledTime:    uint64(max(u.CPU.ThrottledTime, 0)),
			Measured:         append([]string{}, u.CPU.Measured...),
		},
	}
	c := out.CpuStats
	c.Percent = percentOf(u.CPU.Total-base.CPU.Total, wall)
	c.UserMode = percentOf(u.CPU.User-base.CPU.User, wall)
	c.SystemMode = percentOf(u.CPU.System-base.CPU.System, wall)
	c.TotalTicks = c.Percent / 100 * mhzPerCore
	return out
}

// percentOf is used as a percentage of wall; 0 when either is not
// positive.
func percentOf(used, wall time.Duration) float64 {
	if used <= 0 || wall <= 0 {
		return 0
	}
	return float64(used) / float64(wall) * 100
}
