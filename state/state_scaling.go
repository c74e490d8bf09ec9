package state

import (
	"fmt"

	"github.com/droverhq/drover/structs"
)

// ScalingEventsByJob returns the job's scaling events, nil when it has
// none.
func (s *Snapshot) ScalingEventsByJob(namespace, jobID string) (*structs.JobScalingEvents, error) {
	return getOne[*structs.JobScalingEvents](s, TableScaling, "id", namespace, jobID)
}

// AddScalingEventTxn records an event that changes no count (an error or
// a message, as an autoscaler sends) of an existing job.
func (s *Store) AddScalingEventTxn(t *WriteTxn, req *structs.ScalingEventRequest) error {
	job, err := t.reader().JobByID(nsOr(req.Namespace), req.JobID)
	if err != nil {
		return err
	}
	if job == nil {
		return fmt.Errorf("state: job %q: %w", req.JobID, ErrNotFound)
	}
	return t.addScalingEvent(req)
}

// addScalingEvent stores the event, newest first, stamped with the
// transaction's index, keeping JobTrackedScalingEvents per group.
func (t *WriteTxn) addScalingEvent(req *structs.ScalingEventRequest) error {
	if req == nil || req.Event == nil || req.TaskGroup == "" {
		return fmt.Errorf("state: scaling event without a group or an event: %w", ErrInvalid)
	}
	ns := nsOr(req.Namespace)
	existing, err := t.reader().ScalingEventsByJob(ns, req.JobID)
	if err != nil {
		return err
	}
	rec := &structs.JobScalingEvents{Namespace: ns, JobID: req.JobID, ScalingEvents: map[string][]*structs.ScalingEvent{}}
	if existing != nil {
		for g, evs := range existing.ScalingEvents {
			rec.ScalingEvents[g] = evs
		}
	}
	ev := *req.Event
	ev.CreateIndex = t.index
	evs := append([]*structs.ScalingEvent{&ev}, rec.ScalingEvents[req.TaskGroup]...)
	if len(evs) > structs.JobTrackedScalingEvents {
		evs = evs[:structs.JobTrackedScalingEvents]
	}
	rec.ScalingEvents[req.TaskGroup] = evs
	rec.ModifyIndex = t.index
	return t.insert(TableScaling, rec)
}

// deleteScalingEvents forgets a purged job's events.
func (t *WriteTxn) deleteScalingEvents(ns, jobID string) error {
	existing, err := t.reader().ScalingEventsByJob(ns, jobID)
	if err != nil || existing == nil {
		return err
	}
	return t.delete(TableScaling, existing)
}

func nsOr(ns string) string {
	if ns == "" {
		return structs.DefaultNamespace
	}
	return ns
}
