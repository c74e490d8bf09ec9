package state

import "github.com/droverhq/drover/structs"

// jobStatus derives a job's status from its allocations and evaluations,
// as Nomad does:
//   - system jobs are running until stopped, then dead;
//   - any allocation not terminal → running;
//   - else any evaluation not terminal → pending;
//   - else a stopped job, or one that had allocations or evaluations → dead;
//   - else (nothing yet) → pending.
func jobStatus(s *Snapshot, job *structs.Job) string {
	if job.Type == structs.JobTypeSystem {
		if job.Stop {
			return structs.JobStatusDead
		}
		return structs.JobStatusRunning
	}
	allocs, err := list[*structs.Allocation](s, TableAllocs, "job", job.Namespace, job.ID)
	if err != nil {
		return structs.JobStatusPending
	}
	for _, a := range allocs {
		if !a.TerminalStatus() {
			return structs.JobStatusRunning
		}
	}
	evals, err := list[*structs.Evaluation](s, TableEvals, "job", job.Namespace, job.ID)
	if err != nil {
		return structs.JobStatusPending
	}
	for _, e := range evals {
		if !e.Terminal() {
			return structs.JobStatusPending
		}
	}
	if job.Stop || len(allocs) > 0 || len(evals) > 0 {
		return structs.JobStatusDead
	}
	return structs.JobStatusPending
}

// refreshJobStatus re-derives the job's status and stores a copy when it
// changed.
func (t *WriteTxn) refreshJobStatus(ns, id string) error {
	r := t.reader()
	job, err := r.JobByID(ns, id)
	if err != nil || job == nil {
		return err
	}
	status := jobStatus(r, job)
	if status == job.Status {
		return nil
	}
	c := job.Copy()
	c.Status = status
	c.ModifyIndex = t.index
	return t.insert(TableJobs, c)
}
