package state

import "github.com/droverhq/drover/structs"

// jobStatus derives a job's status from its allocations and evaluations,
// as Nomad does:
//   - system jobs, and periodic and parameterized jobs (which launch
//     children and run nothing themselves), are running until stopped,
//     then dead;
//   - any allocation not terminal → running;
//   - else any evaluation not terminal → pending;
//   - else a stopped job, one that has allocations or evaluations, or one
//     whose last ones were just garbage collected (reaped) → dead;
//   - else (nothing yet) → pending.
func jobStatus(s *Snapshot, job *structs.Job, reaped bool) (string, error) {
	if job.Type == structs.JobTypeSystem || job.IsParent() {
		if job.Stop {
			return structs.JobStatusDead, nil
		}
		return structs.JobStatusRunning, nil
	}
	hasAllocs, hasEvals := false, false
	it, err := s.txn.Get(TableAllocs, "job", job.Namespace, job.ID)
	if err != nil {
		return "", err
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		hasAllocs = true
		if !obj.(*structs.Allocation).TerminalStatus() {
			return structs.JobStatusRunning, nil
		}
	}
	it, err = s.txn.Get(TableEvals, "job", job.Namespace, job.ID)
	if err != nil {
		return "", err
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		hasEvals = true
		if !obj.(*structs.Evaluation).Terminal() {
			return structs.JobStatusPending, nil
		}
	}
	if job.Stop || hasAllocs || hasEvals || reaped {
		return structs.JobStatusDead, nil
	}
	return structs.JobStatusPending, nil
}

// refreshJobStatus re-derives the job's status and stores a copy when it
// changed.
func (t *WriteTxn) refreshJobStatus(ns, id string, reaped bool) error {
	r := t.reader()
	job, err := r.JobByID(ns, id)
	if err != nil || job == nil {
		return err
	}
	status, err := jobStatus(r, job, reaped)
	if err != nil {
		return err
	}
	if status == job.Status {
		return nil
	}
	c := job.Copy()
	c.Status = status
	c.ModifyIndex = t.index
	t.countJobSummary(job, c)
	return t.insert(TableJobs, c)
}
