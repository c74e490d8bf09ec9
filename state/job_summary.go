package state

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/droverhq/drover/structs"
)

// Job summaries. Each stored job has one row in job_summary: its
// allocations per group by client status, the queued counts of its latest
// scheduling pass, and, for a periodic or parameterized parent, its child
// jobs by status (structs.JobSummary, as Nomad's JobSummary table). The
// row is kept by the writes that change what it counts, in their own
// transaction: every allocation write goes through putAlloc or deleteAlloc,
// which add the difference of the old and new version's status to a
// per-transaction delta of the job; evaluation and job writes note what
// they change the same way; Commit applies the deltas once per job and
// writes a row only when the summary changed. So GET /v1/jobs reads one
// row per job instead of every allocation, and a blocking query on it
// wakes only when a summary or the job list changes.
//
// What a summary derives from beyond the allocation counts lives in a
// second table, job_summary_basis, so that a change to it alone (a newer
// evaluation reporting the same queued counts) does not wake readers of
// the summaries.
//
// RecountJobSummary counts a summary from scratch: the reference the kept
// rows are tested against, and how a snapshot written before the rows
// existed is restored.

// JobSummaryBasis is what a job's summary derives from beyond the counts
// of its allocations.
type JobSummaryBasis struct {
	Namespace string
	JobID     string
	// QueuedEvalID and QueuedEvalIndex name the evaluation whose
	// QueuedAllocations the summary shows: of the job's evaluations that
	// carry queued counts, the one with the highest ModifyIndex (the
	// lowest ID among equals). Empty when there is none.
	QueuedEvalID    string
	QueuedEvalIndex uint64
	// Children counts the jobs whose ParentID is this job, by status,
	// whatever this job's type; the summary shows them while the job is a
	// parent (structs.Job.IsParent).
	Children structs.JobChildrenSummary
}

// summaryDelta is what a transaction's writes changed in one job's
// summary and not yet written.
type summaryDelta struct {
	// groups is the change of each group's allocation counts (Queued
	// unused).
	groups map[string]structs.TaskGroupSummary
	// children is the change of the job's child counts.
	children structs.JobChildrenSummary
	// queued is the best evaluation with queued counts written in the
	// transaction; rescan asks for the job's evaluations to be read again
	// (the one the summary showed was deleted or lost its counts).
	queuedID    string
	queuedIndex uint64
	rescan      bool
}

func (t *WriteTxn) summaryDeltaOf(ns, jobID string) *summaryDelta {
	k := jobKey{nsOr(ns), jobID}
	if t.summaries == nil {
		t.summaries = map[jobKey]*summaryDelta{}
	}
	d := t.summaries[k]
	if d == nil {
		d = &summaryDelta{}
		t.summaries[k] = d
	}
	return d
}

// addAllocSummary adds n (+1 or -1) allocations of a's group and client
// status to its job's summary.
func (d *summaryDelta) addAlloc(a *structs.Allocation, n int) {
	if d.groups == nil {
		d.groups = map[string]structs.TaskGroupSummary{}
	}
	g := d.groups[a.TaskGroup]
	addClientStatus(&g, a.ClientStatus, n)
	d.groups[a.TaskGroup] = g
}

// addClientStatus adds n to the count of status: pending (and anything
// unknown to the summary) is Starting, as Nomad's.
func addClientStatus(g *structs.TaskGroupSummary, status string, n int) {
	switch status {
	case structs.AllocClientStatusRunning:
		g.Running += n
	case structs.AllocClientStatusComplete:
		g.Complete += n
	case structs.AllocClientStatusFailed:
		g.Failed += n
	case structs.AllocClientStatusLost:
		g.Lost += n
	case structs.AllocClientStatusUnknown:
		g.Unknown += n
	default:
		g.Starting += n
	}
}

// countAllocSummary records that old (nil: none) was replaced by a (nil:
// deleted) in their jobs' summaries.
func (t *WriteTxn) countAllocSummary(old, a *structs.Allocation) {
	if old != nil && a != nil && old.ClientStatus == a.ClientStatus && old.TaskGroup == a.TaskGroup &&
		old.JobID == a.JobID && old.Namespace == a.Namespace {
		return
	}
	if old != nil {
		t.summaryDeltaOf(old.Namespace, old.JobID).addAlloc(old, -1)
	}
	if a != nil {
		t.summaryDeltaOf(a.Namespace, a.JobID).addAlloc(a, 1)
	}
}

// countEvalSummary records that old (nil: none) was replaced by e (nil:
// deleted), written at index.
func (t *WriteTxn) countEvalSummary(old, e *structs.Evaluation) {
	if old != nil && old.QueuedAllocations != nil &&
		(e == nil || e.QueuedAllocations == nil || e.JobID != old.JobID || nsOr(e.Namespace) != nsOr(old.Namespace)) {
		t.summaryDeltaOf(old.Namespace, old.JobID).rescan = true
	}
	if e != nil && e.QueuedAllocations != nil {
		d := t.summaryDeltaOf(e.Namespace, e.JobID)
		if d.queuedID == "" || laterQueued(e.ID, e.ModifyIndex, d.queuedID, d.queuedIndex) {
			d.queuedID, d.queuedIndex = e.ID, e.ModifyIndex
		}
	}
}

// laterQueued reports whether evaluation (id, index) is shown before
// (otherID, otherIndex): a higher ModifyIndex, or the lower ID at the
// same index.
func laterQueued(id string, index uint64, otherID string, otherIndex uint64) bool {
	return index > otherIndex || (index == otherIndex && id < otherID)
}

// countJobSummary records that job version old (nil: none) was replaced
// by j (nil: deleted) in the summary of each one's parent, and that the
// job's own summary must be looked at (its groups, Stop, CreateIndex).
func (t *WriteTxn) countJobSummary(old, j *structs.Job) {
	cur := old
	if j != nil {
		cur = j
	}
	t.summaryDeltaOf(cur.Namespace, cur.ID)
	if old != nil && j != nil && old.ParentID == j.ParentID && old.Status == j.Status {
		return
	}
	if old != nil && old.ParentID != "" {
		addChild(&t.summaryDeltaOf(old.Namespace, old.ParentID).children, old.Status, -1)
	}
	if j != nil && j.ParentID != "" {
		addChild(&t.summaryDeltaOf(j.Namespace, j.ParentID).children, j.Status, 1)
	}
}

// addChild adds n to the count of a child job in status, as Nomad's
// Children summary: pending is anything neither running nor dead.
func addChild(c *structs.JobChildrenSummary, status string, n int64) {
	switch status {
	case structs.JobStatusRunning:
		c.Running += n
	case structs.JobStatusDead:
		c.Dead += n
	default:
		c.Pending += n
	}
}

// flushSummaries applies the transaction's summary deltas, in job order,
// after job statuses are re-derived (a child's new status is a change of
// its parent's summary).
func (t *WriteTxn) flushSummaries() error {
	if len(t.summaries) == 0 {
		return nil
	}
	keys := slices.SortedFunc(maps.Keys(t.summaries), compareJobKeys)
	for _, k := range keys {
		if err := t.flushSummary(k, t.summaries[k]); err != nil {
			return fmt.Errorf("state: summary of job %q in namespace %q: %w", k.id, k.ns, err)
		}
	}
	t.summaries = nil
	return nil
}

func compareJobKeys(a, b jobKey) int {
	if c := cmp.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

func (t *WriteTxn) flushSummary(k jobKey, d *summaryDelta) error {
	r := t.reader()
	job, err := r.JobByID(k.ns, k.id)
	if err != nil {
		return err
	}
	oldSum, err := r.JobSummaryByID(k.ns, k.id)
	if err != nil {
		return err
	}
	oldBasis, err := r.JobSummaryBasisByID(k.ns, k.id)
	if err != nil {
		return err
	}
	if job == nil {
		// Purged (or never stored): the rows go with the job. Its
		// allocations, until collected, count again if it comes back.
		if oldSum != nil {
			if err := t.delete(TableJobSummary, oldSum); err != nil {
				return err
			}
		}
		if oldBasis != nil {
			return t.delete(TableJobSummaryBasis, oldBasis)
		}
		return nil
	}
	var counts map[string]structs.TaskGroupSummary
	var basis *JobSummaryBasis
	if oldSum == nil || oldBasis == nil {
		// A job new to the store: count what is there already.
		if counts, basis, err = recountJobSummary(r, job); err != nil {
			return err
		}
	} else {
		counts = allocCounts(oldSum)
		for g, dg := range d.groups {
			c := counts[g]
			c.Starting += dg.Starting
			c.Running += dg.Running
			c.Complete += dg.Complete
			c.Failed += dg.Failed
			c.Lost += dg.Lost
			c.Unknown += dg.Unknown
			counts[g] = c
		}
		b := *oldBasis
		basis = &b
		basis.Children.Pending += d.children.Pending
		basis.Children.Running += d.children.Running
		basis.Children.Dead += d.children.Dead
		if d.rescan {
			if basis.QueuedEvalID, basis.QueuedEvalIndex, err = latestQueuedEval(r, job.Namespace, job.ID); err != nil {
				return err
			}
		} else if d.queuedID != "" && (basis.QueuedEvalID == "" ||
			laterQueued(d.queuedID, d.queuedIndex, basis.QueuedEvalID, basis.QueuedEvalIndex)) {
			basis.QueuedEvalID, basis.QueuedEvalIndex = d.queuedID, d.queuedIndex
		}
	}
	sum, err := buildJobSummary(r, job, counts, basis)
	if err != nil {
		return err
	}
	if oldBasis == nil || *oldBasis != *basis {
		if err := t.insert(TableJobSummaryBasis, basis); err != nil {
			return err
		}
	}
	if oldSum != nil && sameSummary(oldSum, sum) {
		return nil
	}
	sum.ModifyIndex = t.index
	return t.insert(TableJobSummary, sum)
}

// allocCounts returns a copy of the allocation counts of sum, by group,
// without Queued.
func allocCounts(sum *structs.JobSummary) map[string]structs.TaskGroupSummary {
	out := make(map[string]structs.TaskGroupSummary, len(sum.Summary))
	for g, c := range sum.Summary {
		c.Queued = 0
		out[g] = c
	}
	return out
}

// buildJobSummary assembles the summary of job from its allocation counts
// and basis: an entry for every group of the job and every group with
// allocations; Queued from the basis' evaluation unless the job is
// stopped; Children while the job is a parent. ModifyIndex is left 0.
func buildJobSummary(r *Snapshot, job *structs.Job, counts map[string]structs.TaskGroupSummary, basis *JobSummaryBasis) (*structs.JobSummary, error) {
	sum := &structs.JobSummary{
		JobID: job.ID, Namespace: job.Namespace,
		Summary:     make(map[string]structs.TaskGroupSummary, len(job.TaskGroups)),
		Children:    &structs.JobChildrenSummary{},
		CreateIndex: job.CreateIndex,
	}
	for _, tg := range job.TaskGroups {
		sum.Summary[tg.Name] = structs.TaskGroupSummary{}
	}
	for g, c := range counts {
		if c != (structs.TaskGroupSummary{}) {
			sum.Summary[g] = c
		}
	}
	if basis.QueuedEvalID != "" && !job.Stop {
		e, err := r.EvalByID(basis.QueuedEvalID)
		if err != nil {
			return nil, err
		}
		if e != nil {
			for g, n := range e.QueuedAllocations {
				if c, ok := sum.Summary[g]; ok {
					c.Queued = n
					sum.Summary[g] = c
				}
			}
		}
	}
	if job.IsParent() {
		c := basis.Children
		sum.Children = &c
	}
	return sum, nil
}

// sameSummary reports whether a and b count the same, whatever their
// ModifyIndex.
func sameSummary(a, b *structs.JobSummary) bool {
	return a.JobID == b.JobID && a.Namespace == b.Namespace && a.CreateIndex == b.CreateIndex &&
		maps.Equal(a.Summary, b.Summary) && *a.Children == *b.Children
}

// latestQueuedEval returns the job's evaluation whose queued counts its
// summary shows (see JobSummaryBasis), reading all of them.
func latestQueuedEval(r *Snapshot, ns, jobID string) (string, uint64, error) {
	evals, err := r.EvalsByJob(ns, jobID)
	if err != nil {
		return "", 0, err
	}
	var id string
	var index uint64
	for _, e := range evals {
		if e.QueuedAllocations != nil && (id == "" || laterQueued(e.ID, e.ModifyIndex, id, index)) {
			id, index = e.ID, e.ModifyIndex
		}
	}
	return id, index, nil
}

// recountJobSummary counts job's allocations and children and finds its
// queued evaluation, reading everything.
func recountJobSummary(r *Snapshot, job *structs.Job) (map[string]structs.TaskGroupSummary, *JobSummaryBasis, error) {
	allocs, err := r.AllocsByJob(job.Namespace, job.ID)
	if err != nil {
		return nil, nil, err
	}
	counts := map[string]structs.TaskGroupSummary{}
	for _, a := range allocs {
		c := counts[a.TaskGroup]
		addClientStatus(&c, a.ClientStatus, 1)
		counts[a.TaskGroup] = c
	}
	basis := &JobSummaryBasis{Namespace: job.Namespace, JobID: job.ID}
	if basis.QueuedEvalID, basis.QueuedEvalIndex, err = latestQueuedEval(r, job.Namespace, job.ID); err != nil {
		return nil, nil, err
	}
	children, err := r.PeriodicChildren(job.Namespace, job.ID)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range children {
		addChild(&basis.Children, c.Status, 1)
	}
	return counts, basis, nil
}

// RecountJobSummary counts the summary of the job from everything it
// counts, as the kept row should be (ModifyIndex aside, which it leaves
// 0); nil for a job not stored.
func (s *Snapshot) RecountJobSummary(namespace, id string) (*structs.JobSummary, error) {
	job, err := s.JobByID(namespace, id)
	if err != nil || job == nil {
		return nil, err
	}
	counts, basis, err := recountJobSummary(s, job)
	if err != nil {
		return nil, err
	}
	return buildJobSummary(s, job, counts, basis)
}

// JobSummaryByID returns the job's kept summary, or nil.
func (s *Snapshot) JobSummaryByID(namespace, id string) (*structs.JobSummary, error) {
	return getOne[*structs.JobSummary](s, TableJobSummary, "id", namespace, id)
}

// JobSummaries returns every job's kept summary, by namespace and job ID
// (the order of Jobs).
func (s *Snapshot) JobSummaries() ([]*structs.JobSummary, error) {
	return list[*structs.JobSummary](s, TableJobSummary, "id")
}

// JobSummaryBasisByID returns what the job's summary derives from beyond
// its allocation counts, or nil.
func (s *Snapshot) JobSummaryBasisByID(namespace, id string) (*JobSummaryBasis, error) {
	return getOne[*JobSummaryBasis](s, TableJobSummaryBasis, "id", namespace, id)
}

// recountSummaries gives every restored job without a kept summary (a
// snapshot written before the store kept them) one counted from what was
// restored.
func (r *Restorer) recountSummaries() error {
	rd := r.txn.reader()
	jobs, err := rd.Jobs()
	if err != nil {
		return err
	}
	for _, job := range jobs {
		sum, err := rd.JobSummaryByID(job.Namespace, job.ID)
		if err != nil {
			return err
		}
		basis, err := rd.JobSummaryBasisByID(job.Namespace, job.ID)
		if err != nil {
			return err
		}
		if sum != nil && basis != nil {
			continue
		}
		counts, basis, err := recountJobSummary(rd, job)
		if err != nil {
			return err
		}
		if sum, err = buildJobSummary(rd, job, counts, basis); err != nil {
			return err
		}
		sum.ModifyIndex = job.ModifyIndex
		if err := r.txn.txn.Insert(TableJobSummaryBasis, basis); err != nil {
			return err
		}
		if err := r.txn.txn.Insert(TableJobSummary, sum); err != nil {
			return err
		}
	}
	return nil
}
