package state

import (
	"fmt"

	"github.com/droverhq/drover/structs"
)

// PeriodicLaunchByID returns a periodic job's latest launch, nil when it
// has none.
func (s *Snapshot) PeriodicLaunchByID(namespace, id string) (*structs.PeriodicLaunch, error) {
	return getOne[*structs.PeriodicLaunch](s, TablePeriodic, "id", namespace, id)
}

// PeriodicChildren returns the jobs launched from a periodic job or
// dispatched from a parameterized one (their ParentID is parentID).
func (s *Snapshot) PeriodicChildren(namespace, parentID string) ([]*structs.Job, error) {
	if parentID == "" {
		return nil, nil
	}
	return list[*structs.Job](s, TableJobs, "parent", nsOr(namespace), parentID)
}

// recordPeriodicLaunch stores a launch of an existing periodic job,
// refusing one that is not later than the recorded launch.
func (t *WriteTxn) recordPeriodicLaunch(l *structs.PeriodicLaunch) error {
	ns := nsOr(l.Namespace)
	parent, err := t.reader().JobByID(ns, l.ID)
	if err != nil {
		return err
	}
	if parent == nil || !parent.IsPeriodic() {
		return fmt.Errorf("state: periodic launch of %q: not a periodic job: %w", l.ID, ErrInvalid)
	}
	prev, err := t.reader().PeriodicLaunchByID(ns, l.ID)
	if err != nil {
		return err
	}
	rec := &structs.PeriodicLaunch{Namespace: ns, ID: l.ID, Launch: l.Launch, CreateIndex: t.index, ModifyIndex: t.index}
	if prev != nil {
		if l.Launch <= prev.Launch {
			return fmt.Errorf("state: periodic job %q was already launched at %d: %w", l.ID, prev.Launch, ErrConflict)
		}
		rec.CreateIndex = prev.CreateIndex
	}
	return t.insert(TablePeriodic, rec)
}

// deletePeriodicLaunch forgets a purged job's launches.
func (t *WriteTxn) deletePeriodicLaunch(ns, id string) error {
	existing, err := t.reader().PeriodicLaunchByID(ns, id)
	if err != nil || existing == nil {
		return err
	}
	return t.delete(TablePeriodic, existing)
}
