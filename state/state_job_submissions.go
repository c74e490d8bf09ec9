package state

import (
	"fmt"
	"slices"

	"github.com/droverhq/drover/structs"
)

// Job submissions (the job_submissions table) are the sources jobs were
// submitted from, one per (namespace, job, version), as Nomad's: a
// registration that carries one keeps it for the version it leaves
// current (a new version, or the current one for an identical
// re-submission, which keeps a source it already has); the job's tracked
// versions bound how many a job keeps (the newest by JobModifyIndex); a
// purge deletes them all.

// putJobSubmission keeps sub for job version version of ns/id, registered
// at t's index, inside t, and prunes the job's oldest submissions.
func (s *Store) putJobSubmission(t *WriteTxn, sub *structs.JobSubmission, ns, id string, version uint64) error {
	if sub == nil {
		return nil
	}
	old, err := t.reader().JobSubmission(ns, id, version)
	if err != nil || old != nil {
		return err
	}
	c := sub.Copy()
	c.Namespace, c.JobID, c.Version, c.JobModifyIndex = ns, id, version, t.index
	if err := t.insert(TableJobSubmissions, c); err != nil {
		return err
	}
	subs, err := t.reader().JobSubmissions(ns, id)
	if err != nil {
		return err
	}
	tracked := s.jobTrackedVersions()
	if len(subs) <= tracked {
		return nil
	}
	slices.SortStableFunc(subs, func(a, b *structs.JobSubmission) int {
		switch {
		case a.JobModifyIndex > b.JobModifyIndex:
			return -1
		case a.JobModifyIndex < b.JobModifyIndex:
			return 1
		}
		return 0
	})
	for _, o := range subs[tracked:] {
		if err := t.delete(TableJobSubmissions, o); err != nil {
			return err
		}
	}
	return nil
}

// deleteJobSubmissions deletes every submission of ns/id inside t.
func (t *WriteTxn) deleteJobSubmissions(ns, id string) error {
	subs, err := t.reader().JobSubmissions(ns, id)
	if err != nil {
		return err
	}
	for _, o := range subs {
		if err := t.delete(TableJobSubmissions, o); err != nil {
			return fmt.Errorf("state: job submission: %w", err)
		}
	}
	return nil
}

// JobSubmission returns the source of version of ns/id, or nil.
func (s *Snapshot) JobSubmission(ns, id string, version uint64) (*structs.JobSubmission, error) {
	return getOne[*structs.JobSubmission](s, TableJobSubmissions, "id", ns, id, version)
}

// JobSubmissions returns the sources kept for ns/id, by version.
func (s *Snapshot) JobSubmissions(ns, id string) ([]*structs.JobSubmission, error) {
	all, err := list[*structs.JobSubmission](s, TableJobSubmissions, "id_prefix", ns, id)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, o := range all {
		if o.Namespace == ns && o.JobID == id { // the prefix also matches longer IDs
			out = append(out, o)
		}
	}
	return out, nil
}
