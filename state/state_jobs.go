package state

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/droverhq/drover/structs"
)

// JobTrackedVersions is how many of a job's latest versions the history
// keeps by default (Nomad's server.job_tracked_versions); the latest
// stable version is kept beyond them (for revert). SetJobTrackedVersions
// changes it.
const JobTrackedVersions = 6

// SetJobTrackedVersions sets how many of a job's latest versions the
// history keeps from the next registration on (n < 1: the default). Every
// server must use the same number: the pruning is part of applying a
// registration.
func (s *Store) SetJobTrackedVersions(n int) {
	if n < 1 {
		n = JobTrackedVersions
	}
	s.trackedVersions.Store(int64(n))
}

// jobTrackedVersions is the number of versions kept.
func (s *Store) jobTrackedVersions() int {
	if n := s.trackedVersions.Load(); n > 0 {
		return int(n)
	}
	return JobTrackedVersions
}

// RegisterJob stores a job version with its eval and optional deployment.
func (s *Store) RegisterJob(index uint64, req *structs.JobRegisterRequest) (*structs.JobRegisterResult, error) {
	var res *structs.JobRegisterResult
	err := s.update(index, func(t *WriteTxn) error {
		var err error
		res, err = s.RegisterJobTxn(t, req)
		return err
	})
	return res, err
}

// RegisterJobTxn is RegisterJob inside t.
func (s *Store) RegisterJobTxn(t *WriteTxn, req *structs.JobRegisterRequest) (*structs.JobRegisterResult, error) {
	return s.registerJobTxn(t, req, nil)
}

// registerJobTxn is RegisterJobTxn storing a new version as *version when
// not nil (RegisterJobAtVersionTxn).
func (s *Store) registerJobTxn(t *WriteTxn, req *structs.JobRegisterRequest, version *uint64) (*structs.JobRegisterResult, error) {
	if req.EnforceIndex {
		if err := s.checkJobModifyIndex(t, req); err != nil {
			return nil, err
		}
	}
	if req.PeriodicLaunch != nil {
		if err := t.recordPeriodicLaunch(req.PeriodicLaunch); err != nil {
			return nil, err
		}
	}
	res, err := s.upsertJobTxn(t, req.Job, req.SubmitTime, version)
	if err != nil {
		return nil, err
	}
	ns := nsOr(req.Job.Namespace)
	if err := t.ensureNamespace(ns); err != nil {
		return nil, err
	}
	if err := s.putJobSubmission(t, req.Submission, ns, req.Job.ID, res.JobVersion); err != nil {
		return nil, err
	}
	if req.Eval != nil {
		e := req.Eval.Copy()
		e.JobModifyIndex = res.JobModifyIndex
		if err := s.upsertEval(t, e); err != nil {
			return nil, err
		}
	}
	if req.Deployment != nil {
		if err := s.UpsertDeploymentTxn(t, req.Deployment, 0); err != nil {
			return nil, err
		}
	}
	if req.Scaling != nil {
		if err := t.addScalingEvent(req.Scaling); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// checkJobModifyIndex enforces the request's JobModifyIndex: 0 means the
// job must not exist; otherwise it must be the stored JobModifyIndex.
func (s *Store) checkJobModifyIndex(t *WriteTxn, req *structs.JobRegisterRequest) error {
	if req.Job == nil {
		return fmt.Errorf("state: register without a job: %w", ErrInvalid)
	}
	ns := req.Job.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	existing, err := t.reader().JobByID(ns, req.Job.ID)
	if err != nil {
		return err
	}
	switch {
	case existing == nil && req.JobModifyIndex != 0:
		return fmt.Errorf("state: enforcing job modify index %d: job %q does not exist: %w",
			req.JobModifyIndex, req.Job.ID, ErrConflict)
	case existing != nil && existing.JobModifyIndex != req.JobModifyIndex:
		return fmt.Errorf("state: enforcing job modify index %d: job %q exists with conflicting job modify index %d: %w",
			req.JobModifyIndex, req.Job.ID, existing.JobModifyIndex, ErrConflict)
	}
	return nil
}

// UpsertJobTxn stores job as the job's current version. The version number
// increments only when the spec changed (structs.Job.SpecChanged); an
// identical submission leaves the job as it is. A new version gets
// ModifyIndex and JobModifyIndex = the raft index, SubmitTime = submitTime,
// Stable = false, and is added to the version history (pruned to
// JobTrackedVersions plus the latest stable version).
func (s *Store) UpsertJobTxn(t *WriteTxn, job *structs.Job, submitTime int64) (*structs.JobRegisterResult, error) {
	return s.upsertJobTxn(t, job, submitTime, nil)
}

// upsertJobTxn is UpsertJobTxn storing a new version as *version when not
// nil (see structs.JobRegisterAtVersionRequest).
func (s *Store) upsertJobTxn(t *WriteTxn, job *structs.Job, submitTime int64, version *uint64) (*structs.JobRegisterResult, error) {
	if job == nil || job.ID == "" {
		return nil, fmt.Errorf("state: job without ID: %w", ErrInvalid)
	}
	ns := job.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	existing, err := t.reader().JobByID(ns, job.ID)
	if err != nil {
		return nil, err
	}
	if existing != nil && !job.SpecChanged(existing) && (version == nil || existing.Version == *version) {
		return &structs.JobRegisterResult{
			JobVersion: existing.Version, JobModifyIndex: existing.JobModifyIndex,
		}, nil
	}
	if version != nil && existing != nil && existing.Version >= *version {
		return nil, fmt.Errorf("state: job %q is at version %d, not before version %d: %w", job.ID, existing.Version, *version, ErrConflict)
	}
	j := job.Copy()
	j.Namespace = ns
	j.Stable = false
	j.SubmitTime = submitTime
	j.CreateIndex, j.ModifyIndex, j.JobModifyIndex = t.index, t.index, t.index
	structs.StampScaling(j, t.index)
	j.Version = 0
	if existing != nil {
		j.CreateIndex = existing.CreateIndex
		j.Version = existing.Version + 1
	}
	if version != nil {
		j.Version = *version
	}
	if j.Status, err = jobStatus(t.reader(), j, false); err != nil {
		return nil, err
	}
	t.countJobSummary(existing, j)
	if err := t.insert(TableJobs, j); err != nil {
		return nil, err
	}
	if err := t.insert(TableJobVersions, j); err != nil {
		return nil, err
	}
	if err := s.pruneJobVersions(t, ns, j.ID); err != nil {
		return nil, err
	}
	t.touchJob(ns, j.ID)
	return &structs.JobRegisterResult{
		JobVersion: j.Version, JobModifyIndex: j.JobModifyIndex, SpecChanged: true,
	}, nil
}

// pruneJobVersions keeps the JobTrackedVersions latest versions and the
// latest stable one.
func (s *Store) pruneJobVersions(t *WriteTxn, ns, id string) error {
	versions, err := t.reader().JobVersionsByID(ns, id)
	tracked := s.jobTrackedVersions()
	if err != nil || len(versions) <= tracked {
		return err
	}
	keptStable := false
	for i, v := range versions {
		if i < tracked {
			keptStable = keptStable || v.Stable
			continue
		}
		if v.Stable && !keptStable {
			keptStable = true
			continue
		}
		if err := t.delete(TableJobVersions, v); err != nil {
			return err
		}
	}
	return nil
}

// DeregisterJob stops or purges a job; see DeregisterJobTxn.
func (s *Store) DeregisterJob(index uint64, req *structs.JobDeregisterRequest) (*structs.JobRegisterResult, error) {
	var res *structs.JobRegisterResult
	err := s.update(index, func(t *WriteTxn) error {
		var err error
		res, err = s.DeregisterJobTxn(t, req)
		return err
	})
	return res, err
}

// DeregisterJobTxn stops the job (a new version with Stop set) or, with
// Purge, deletes it and its history; allocations and evals stay for the
// scheduler to stop and the garbage collector to reap. An active deployment
// of the job is cancelled. The eval is stored. The result is nil on purge.
func (s *Store) DeregisterJobTxn(t *WriteTxn, req *structs.JobDeregisterRequest) (*structs.JobRegisterResult, error) {
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	existing, err := t.reader().JobByID(ns, req.JobID)
	if err != nil {
		return nil, err
	}
	if existing == nil {
		return nil, fmt.Errorf("state: job %q in namespace %q: %w", req.JobID, ns, ErrNotFound)
	}
	var res *structs.JobRegisterResult
	if req.Purge {
		t.countJobSummary(existing, nil)
		if err := t.delete(TableJobs, existing); err != nil {
			return nil, err
		}
		versions, err := t.reader().JobVersionsByID(ns, req.JobID)
		if err != nil {
			return nil, err
		}
		for _, v := range versions {
			if err := t.delete(TableJobVersions, v); err != nil {
				return nil, err
			}
		}
		if err := t.deleteScalingEvents(ns, req.JobID); err != nil {
			return nil, err
		}
		if err := t.deletePeriodicLaunch(ns, req.JobID); err != nil {
			return nil, err
		}
		if err := t.deleteJobSubmissions(ns, req.JobID); err != nil {
			return nil, err
		}
	} else {
		stopped := existing.Copy()
		stopped.Stop = true
		if res, err = s.UpsertJobTxn(t, stopped, req.SubmitTime); err != nil {
			return nil, err
		}
	}
	deps, err := t.reader().DeploymentsByJob(ns, req.JobID)
	if err != nil {
		return nil, err
	}
	for _, d := range deps {
		if !d.Active() {
			continue
		}
		c := d.Copy()
		c.Status = structs.DeploymentStatusCancelled
		c.StatusDescription = structs.DeploymentStatusDescriptionStoppedJob
		if err := s.putDeployment(t, c, req.SubmitTime); err != nil {
			return nil, err
		}
	}
	if req.Eval != nil {
		e := req.Eval.Copy()
		if res != nil {
			e.JobModifyIndex = res.JobModifyIndex
		}
		if err := s.upsertEval(t, e); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// SetJobStability marks a job version stable or not.
func (s *Store) SetJobStability(index uint64, req *structs.JobStabilityRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.SetJobStabilityTxn(t, req) })
}

// SetJobStabilityTxn is SetJobStability inside t: it changes the version in
// the history and, when that version is current, the current job.
func (s *Store) SetJobStabilityTxn(t *WriteTxn, req *structs.JobStabilityRequest) error {
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	v, err := t.reader().JobByIDAndVersion(ns, req.JobID, req.JobVersion)
	if err != nil {
		return err
	}
	if v == nil {
		return fmt.Errorf("state: job %q version %d: %w", req.JobID, req.JobVersion, ErrNotFound)
	}
	c := v.Copy()
	c.Stable = req.Stable
	c.ModifyIndex = t.index
	if err := t.insert(TableJobVersions, c); err != nil {
		return err
	}
	cur, err := t.reader().JobByID(ns, req.JobID)
	if err != nil {
		return err
	}
	if cur != nil && cur.Version == req.JobVersion {
		cc := cur.Copy()
		cc.Stable = req.Stable
		cc.ModifyIndex = t.index
		if err := t.insert(TableJobs, cc); err != nil {
			return err
		}
	}
	return nil
}

// JobByID returns the job's current version, or nil.
func (s *Snapshot) JobByID(namespace, id string) (*structs.Job, error) {
	return getOne[*structs.Job](s, TableJobs, "id", namespace, id)
}

// Jobs returns every job's current version, by namespace and ID.
func (s *Snapshot) Jobs() ([]*structs.Job, error) {
	return list[*structs.Job](s, TableJobs, "id")
}

// JobVersionsByID returns the job's stored versions, newest first.
func (s *Snapshot) JobVersionsByID(namespace, id string) ([]*structs.Job, error) {
	out, err := list[*structs.Job](s, TableJobVersions, "job", namespace, id)
	slices.SortFunc(out, func(a, b *structs.Job) int { return cmp.Compare(b.Version, a.Version) })
	return out, err
}

// JobByIDAndVersion returns one stored version, or nil.
func (s *Snapshot) JobByIDAndVersion(namespace, id string, version uint64) (*structs.Job, error) {
	return getOne[*structs.Job](s, TableJobVersions, "id", namespace, id, version)
}

// LatestStableJobVersion returns the newest stable version, or nil.
func (s *Snapshot) LatestStableJobVersion(namespace, id string) (*structs.Job, error) {
	versions, err := s.JobVersionsByID(namespace, id)
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		if v.Stable {
			return v, nil
		}
	}
	return nil, nil
}
