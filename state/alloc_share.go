package state

import (
	"reflect"

	"github.com/droverhq/drover/structs"
)

// Memory per allocation. A stored allocation is never changed (see the
// package documentation), so its nested values can be shared: with the
// next version of the same allocation, and between allocations whose
// values are equal. The helpers below do that; each shared value is
// immutable from the moment it is stored, and a writer that changes one
// replaces it with its own copy.

// maxTaskEvents is how many events of a task the store keeps, the newest:
// as many as a client keeps (Nomad's clients keep 10). A client that sends
// more has the older ones dropped.
const maxTaskEvents = 10

// rewrite returns a shallow copy of a stored allocation, for a writer that
// changes its top-level fields. Nested values (resources, task states,
// deployment status, metrics, reschedule tracker, job) stay shared with
// the stored version; a writer that changes one of them assigns a new
// value instead (setHealth copies the deployment status first).
func rewrite(a *structs.Allocation) *structs.Allocation {
	c := *a
	return &c
}

// resKey names the allocations that share one reservation object.
type resKey struct{ ns, job, group string }

// shareAlloc makes a (a fresh copy about to be inserted, with existing
// its stored version or nil) point to shared copies: interned strings,
// the placement score kept without a map of its own,
// the reservation of an earlier alloc of the same group in this
// transaction (or of existing) when equal, and the stored job object when
// a.Job is that same job version.
func (t *WriteTxn) shareAlloc(a, existing *structs.Allocation) error {
	if t.shared.res == nil {
		t.shared.res = map[resKey]*structs.AllocatedResources{}
		t.shared.jobs = map[*structs.Job]*structs.Job{}
	}
	t.strs.allocStrings(a)
	for _, s := range a.TaskStates {
		if s != nil {
			t.strs.taskState(s)
		}
	}
	if r := a.AllocatedResources; r != nil {
		if existing != nil && sameReservation(existing.AllocatedResources, r) {
			a.AllocatedResources = existing.AllocatedResources
		} else {
			k := resKey{a.Namespace, a.JobID, a.TaskGroup}
			if prev := t.shared.res[k]; sameReservation(prev, r) {
				a.AllocatedResources = prev
			} else {
				t.shared.res[k] = r
			}
		}
	}
	if a.Job != nil {
		j, err := t.storedJob(a.Job)
		if err != nil {
			return err
		}
		a.Job = j
	}
	if m := a.Metrics; m != nil && len(m.Scores) == 1 {
		// The placement's score of its node, out of a map of its own
		// (structs.AllocationMetric.ScoreNode); a's Metrics may be
		// shared with what it was copied from.
		c := *m
		c.CompactScore(a.NodeID)
		if c.ScoreNode != "" {
			c.ScoreNode = a.NodeID // interned above
			a.Metrics = &c
		}
	}
	return nil
}

// storedJob returns the store's object for job when job is an equal copy
// of a stored version (current or historic), else job itself. A plan entry carries
// its own decoded copy of the job; without this every plan's allocations
// would keep one copy each.
func (t *WriteTxn) storedJob(job *structs.Job) (*structs.Job, error) {
	if s, ok := t.shared.jobs[job]; ok {
		return s, nil
	}
	found := job
	ns := job.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	cur, err := t.reader().JobByID(ns, job.ID)
	if err != nil {
		return nil, err
	}
	if sameJobVersion(cur, job) {
		found = cur
	} else {
		v, err := t.reader().JobByIDAndVersion(ns, job.ID, job.Version)
		if err != nil {
			return nil, err
		}
		if sameJobVersion(v, job) {
			found = v
		}
	}
	t.shared.jobs[job] = found
	return found, nil
}

// sameJobVersion reports whether stored and job are equal copies of one
// job version. The indexes and status are compared first, which rules
// out nearly every other version cheaply; the deep comparison (once per
// job object and transaction) makes sharing safe whatever the fields.
func sameJobVersion(stored, job *structs.Job) bool {
	return stored != nil && stored.Namespace == job.Namespace && stored.ID == job.ID &&
		stored.Version == job.Version && stored.ModifyIndex == job.ModifyIndex &&
		stored.JobModifyIndex == job.JobModifyIndex && stored.Status == job.Status &&
		reflect.DeepEqual(stored, job)
}

// sameReservation reports whether a and b reserve the same CPU, memory
// and disk, with neither holding networks or ports (those are per
// allocation).
func sameReservation(a, b *structs.AllocatedResources) bool {
	if a == nil || b == nil {
		return false
	}
	if len(a.Shared.Networks) > 0 || len(a.Shared.Ports) > 0 ||
		len(b.Shared.Networks) > 0 || len(b.Shared.Ports) > 0 ||
		a.Shared.DiskMB != b.Shared.DiskMB || len(a.Tasks) != len(b.Tasks) {
		return false
	}
	for name, ta := range a.Tasks {
		tb, ok := b.Tasks[name]
		if !ok || (ta == nil) != (tb == nil) || (ta != nil && *ta != *tb) {
			return false
		}
	}
	return true
}

// clientTaskStates returns the task states to store for a client's
// report: the reported states copied (the request is the caller's), each
// with at most maxTaskEvents events (the newest) and its strings
// interned. A reported state equal to the stored one keeps the stored
// object, and the stored map is kept when every state is; events already
// stored are kept too. Only what changed is allocated anew.
func (t *WriteTxn) clientTaskStates(stored, reported map[string]*structs.TaskState) map[string]*structs.TaskState {
	out := make(map[string]*structs.TaskState, len(reported))
	same := stored != nil && len(stored) == len(reported)
	for name, s := range reported {
		old, ok := stored[name]
		switch {
		case s == nil:
			out[t.strs.str(name)] = nil
			same = same && ok && old == nil
		case ok && old != nil && sameTaskState(old, s):
			out[t.strs.str(name)] = old
		default:
			same = false
			c := capEvents(s)
			t.strs.taskState(c) // before reuseEvents: stored events are not ours to change
			if old != nil {
				reuseEvents(c, old)
			}
			out[t.strs.str(name)] = c
		}
	}
	if same {
		return stored
	}
	return out
}

// reuseEvents points the events of c (a fresh copy) that equal stored
// events of old at the stored objects. A client's events only grow at the
// end (and lose the oldest past the cap), so the stored ones are matched
// from the first of c's events onwards.
func reuseEvents(c, old *structs.TaskState) {
	if len(c.Events) == 0 || len(old.Events) == 0 {
		return
	}
	for d, e := range old.Events {
		if !sameTaskEvent(e, c.Events[0]) {
			continue
		}
		for i := 0; d+i < len(old.Events) && i < len(c.Events); i++ {
			if !sameTaskEvent(old.Events[d+i], c.Events[i]) {
				return
			}
			c.Events[i] = old.Events[d+i]
		}
		return
	}
}

// capEvents returns a deep copy of s that keeps only the newest
// maxTaskEvents events.
func capEvents(s *structs.TaskState) *structs.TaskState {
	if len(s.Events) <= maxTaskEvents {
		return s.Copy()
	}
	trimmed := *s
	trimmed.Events = s.Events[len(s.Events)-maxTaskEvents:]
	return trimmed.Copy()
}

// sameTaskState reports whether stored (as the store keeps it: events
// capped) equals the report s once s is capped.
func sameTaskState(stored, s *structs.TaskState) bool {
	if stored.State != s.State || stored.Failed != s.Failed || stored.Restarts != s.Restarts ||
		stored.LastRestart != s.LastRestart || stored.StartedAt != s.StartedAt ||
		stored.FinishedAt != s.FinishedAt {
		return false
	}
	events := s.Events
	if len(events) > maxTaskEvents {
		events = events[len(events)-maxTaskEvents:]
	}
	if len(stored.Events) != len(events) || (stored.Events == nil) != (events == nil) {
		return false
	}
	for i, e := range events {
		if !sameTaskEvent(stored.Events[i], e) {
			return false
		}
	}
	return true
}

func sameTaskEvent(a, b *structs.TaskEvent) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Type == b.Type && a.Time == b.Time && a.Message == b.Message &&
		a.DisplayMessage == b.DisplayMessage && a.ExitCode == b.ExitCode && a.Signal == b.Signal &&
		a.KillTimeout == b.KillTimeout && a.TaskEventExtra.Equal(b.TaskEventExtra)
}

// restoredAlloc returns a copy of a, restored from a snapshot, that shares
// what shareAlloc shares; task states are copied (not capped: the restore
// keeps what was stored).
func (t *WriteTxn) restoredAlloc(a *structs.Allocation) (*structs.Allocation, error) {
	c := rewrite(a)
	if a.TaskStates != nil {
		c.TaskStates = make(map[string]*structs.TaskState, len(a.TaskStates))
		for name, s := range a.TaskStates {
			c.TaskStates[t.strs.str(name)] = s.Copy()
		}
	}
	if err := t.shareAlloc(c, nil); err != nil {
		return nil, err
	}
	return c, nil
}
