package state

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// UpsertAllocsTxn inserts new allocations, or replaces existing ones as the
// servers see them (job, desired status, resources, deployment), keeping
// what the client reported (client status, task states, and deployment
// health while the alloc stays in the same deployment). Deployment counters
// are derived: an alloc new to a deployment counts as placed, a canary is
// recorded. New allocs get CreateIndex; every written alloc gets ModifyIndex
// and AllocModifyIndex = the raft index, and ModifyTime = at (UnixNano).
func (s *Store) UpsertAllocsTxn(t *WriteTxn, allocs []*structs.Allocation, at int64) error {
	d := newDeploymentDeltas()
	for _, a := range allocs {
		if err := s.upsertAlloc(t, d, a, at); err != nil {
			return err
		}
	}
	return s.flushDeploymentDeltas(t, d, at)
}

// UpsertAllocs is UpsertAllocsTxn in its own transaction.
func (s *Store) UpsertAllocs(index uint64, allocs []*structs.Allocation, at int64) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpsertAllocsTxn(t, allocs, at) })
}

func (s *Store) upsertAlloc(t *WriteTxn, d *deploymentDeltas, alloc *structs.Allocation, at int64) error {
	if alloc == nil || alloc.ID == "" || alloc.JobID == "" {
		return fmt.Errorf("state: alloc without ID or job ID: %w", ErrInvalid)
	}
	existing, err := t.reader().AllocByID(alloc.ID)
	if err != nil {
		return err
	}
	a := alloc.Copy()
	if a.Namespace == "" {
		a.Namespace = structs.DefaultNamespace
	}
	if err := t.shareAlloc(a, existing); err != nil {
		return err
	}
	a.CreateIndex = t.index
	if existing == nil {
		if a.CreateTime == 0 {
			a.CreateTime = at
		}
		if a.ClientStatus == "" {
			a.ClientStatus = structs.AllocClientStatusPending
		}
	} else {
		a.CreateIndex = existing.CreateIndex
		a.CreateTime = existing.CreateTime
		a.TaskStates = existing.TaskStates
		a.AllocStates = existing.AllocStates
		if a.Job == nil {
			a.Job = existing.Job
		}
		if a.ClientStatus != structs.AllocClientStatusLost {
			a.ClientStatus = existing.ClientStatus
			a.ClientDescription = existing.ClientDescription
		}
		if a.DeploymentID == existing.DeploymentID {
			a.DeploymentStatus = existing.DeploymentStatus
		} else if a.DeploymentStatus != nil {
			// Moved into a new deployment: its health there is unknown.
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: a.DeploymentStatus.Canary}
		}
	}
	if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil && ds.ModifyIndex == 0 {
		// Health that came with the plan is recorded at this index, so
		// that later writes of the alloc do not move it.
		a.DeploymentStatus = ds.Copy()
		a.DeploymentStatus.ModifyIndex = t.index
	}
	a.ModifyIndex, a.AllocModifyIndex = t.index, t.index
	a.ModifyTime = at
	if err := t.putAlloc(existing, a); err != nil {
		return err
	}
	t.touchJob(a.Namespace, a.JobID)
	if a.DeploymentID != "" && (existing == nil || existing.DeploymentID != a.DeploymentID) {
		d.placed(a)
	}
	return nil
}

// StopAllocTxn marks an existing allocation to stop. Unknown allocations
// are skipped (they may have been collected since the plan was made).
func (s *Store) StopAllocTxn(t *WriteTxn, stop *structs.AllocStopUpdate, at int64) error {
	existing, err := t.reader().AllocByID(stop.AllocID)
	if err != nil || existing == nil {
		return err
	}
	a := rewrite(existing)
	a.DesiredStatus = structs.AllocDesiredStatusStop
	a.DesiredDescription = t.strs.str(stop.DesiredDescription)
	if stop.ClientStatus != "" && stop.ClientStatus != a.ClientStatus {
		a.ClientStatus = t.strs.str(stop.ClientStatus)
		a.AppendClientStatus(stop.ClientStatus, time.Unix(0, at).UTC())
	}
	if stop.FollowupEvalID != "" {
		a.FollowupEvalID = stop.FollowupEvalID
	}
	a.ModifyIndex, a.AllocModifyIndex = t.index, t.index
	a.ModifyTime = at
	if err := t.putAlloc(existing, a); err != nil {
		return err
	}
	t.touchJob(a.Namespace, a.JobID)
	return nil
}

// UpdateAllocsFromClient applies client reports; see
// UpdateAllocsFromClientTxn.
func (s *Store) UpdateAllocsFromClient(index uint64, req *structs.AllocClientUpdateRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpdateAllocsFromClientTxn(t, req) })
}

// UpdateAllocsFromClientTxn applies what clients report: client status and
// description, task states, and deployment health. Unknown allocations are
// skipped. A health verdict equal to the stored one is not recorded again.
// A deployment health set for the first time (Healthy from unset
// to true or false) counts once in the deployment's HealthyAllocs or
// UnhealthyAllocs, and a healthy allocation of a deployment that then
// fails counts once more in UnhealthyAllocs (so that it counts the new
// version's failures, which max_failed limits); a healthy one also moves the group's RequireProgressBy
// to its time + ProgressDeadline. The health time is the DeploymentStatus
// Timestamp, or req.UpdatedAt when unset. The request's evals are stored.
func (s *Store) UpdateAllocsFromClientTxn(t *WriteTxn, req *structs.AllocClientUpdateRequest) error {
	d := newDeploymentDeltas()
	for _, u := range req.Allocs {
		if u == nil {
			continue
		}
		existing, err := t.reader().AllocByID(u.ID)
		if err != nil {
			return err
		}
		if existing == nil {
			continue
		}
		a := rewrite(existing)
		if u.ClientStatus != "" {
			a.ClientStatus = t.strs.str(u.ClientStatus)
			if existing.ClientStatus == structs.AllocClientStatusUnknown && u.ClientStatus != structs.AllocClientStatusUnknown {
				// Reconnected: the end of the alloc's unknown time.
				a.AppendClientStatus(u.ClientStatus, time.Unix(0, req.UpdatedAt).UTC())
			}
		}
		if a.DeploymentID != "" && existing.IsHealthy() && a.ClientStatus == structs.AllocClientStatusFailed &&
			existing.ClientStatus != structs.AllocClientStatusFailed {
			// A new alloc that was healthy and then failed is a failure of
			// its version too (max_failed counts it), though its health
			// verdict stays.
			d.health(a, false, time.Time{})
		}
		a.ClientDescription = t.strs.str(u.ClientDescription)
		if u.TaskStates != nil {
			a.TaskStates = t.clientTaskStates(existing.TaskStates, u.TaskStates)
		}
		if u.NetworkStatus != nil {
			// The allocation's own network (bridge mode), as its client
			// made it; kept once reported.
			a.NetworkStatus = u.NetworkStatus.Copy()
		}
		if u.DeploymentStatus != nil && u.DeploymentStatus.Healthy != nil && !sameHealth(a, *u.DeploymentStatus.Healthy) {
			ts := u.DeploymentStatus.Timestamp
			if ts.IsZero() {
				ts = time.Unix(0, req.UpdatedAt).UTC()
			}
			setHealth(t, d, a, *u.DeploymentStatus.Healthy, ts)
		}
		a.ModifyIndex = t.index
		a.ModifyTime = req.UpdatedAt
		if err := t.putAlloc(existing, a); err != nil {
			return err
		}
		t.touchJob(a.Namespace, a.JobID)
	}
	if err := s.flushDeploymentDeltas(t, d, req.UpdatedAt); err != nil {
		return err
	}
	return s.UpsertEvalsTxn(t, req.Evals)
}

// sameHealth reports whether a already has the given deployment health.
// A client repeats its verdict in every report; as in Nomad, only a new
// verdict is recorded (with its time and index), so that a repeated one
// neither moves the deployment's health index nor wakes its watcher.
func sameHealth(a *structs.Allocation, healthy bool) bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy == healthy
}

// setHealth sets a's deployment health (a is a copy being written) and
// records a first-time transition in d.
func setHealth(t *WriteTxn, d *deploymentDeltas, a *structs.Allocation, healthy bool, ts time.Time) {
	first := a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil
	if a.DeploymentStatus == nil {
		a.DeploymentStatus = &structs.AllocDeploymentStatus{}
	} else {
		// The stored version may share it (see rewrite).
		a.DeploymentStatus = a.DeploymentStatus.Copy()
	}
	h := healthy
	a.DeploymentStatus.Healthy = &h
	a.DeploymentStatus.Timestamp = ts
	a.DeploymentStatus.ModifyIndex = t.index
	if first && a.DeploymentID != "" {
		d.health(a, healthy, ts)
	}
}

// deleteAllocsTxn deletes allocations by ID, skipping unknown ones.
func (s *Store) deleteAllocsTxn(t *WriteTxn, ids []string) error {
	for _, id := range ids {
		a, err := t.reader().AllocByID(id)
		if err != nil {
			return err
		}
		if a == nil {
			continue
		}
		if err := t.deleteAlloc(a); err != nil {
			return err
		}
		t.touchReapedJob(a.Namespace, a.JobID)
	}
	return nil
}

// AllocByID returns the allocation, or nil.
func (s *Snapshot) AllocByID(id string) (*structs.Allocation, error) {
	return getOne[*structs.Allocation](s, TableAllocs, "id", id)
}

// Allocs returns every allocation, by ID.
func (s *Snapshot) Allocs() ([]*structs.Allocation, error) {
	return list[*structs.Allocation](s, TableAllocs, "id")
}

// AllocsByJob returns the job's allocations (all versions), by ID.
func (s *Snapshot) AllocsByJob(namespace, jobID string) ([]*structs.Allocation, error) {
	return allocsByID(s, "job", namespace, jobID)
}

// LiveAllocsByJob returns the job's allocations that the servers have not
// stopped or evicted (whatever their clients report), by ID: what a
// scheduling pass reconciles. The stopped ones are StoppedAllocsByJob.
func (s *Snapshot) LiveAllocsByJob(namespace, jobID string) ([]*structs.Allocation, error) {
	return list[*structs.Allocation](s, TableAllocs, "job", namespace, jobID, true)
}

// StoppedAllocsByJob returns the job's allocations that the servers
// stopped or evicted and the garbage collector has not deleted yet, by ID.
func (s *Snapshot) StoppedAllocsByJob(namespace, jobID string) ([]*structs.Allocation, error) {
	return list[*structs.Allocation](s, TableAllocs, "job", namespace, jobID, false)
}

// AllocsByNode returns the allocations placed on the node, by ID.
func (s *Snapshot) AllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	return allocsByID(s, "node", nodeID)
}

// LiveAllocsByNode returns the allocations on the node that the servers
// have not stopped or evicted, by ID: what a placement counts (with those
// whose client finished left to the caller).
func (s *Snapshot) LiveAllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	return list[*structs.Allocation](s, TableAllocs, "node", nodeID, true)
}

// LiveAllocsByNodeVersion is LiveAllocsByNode in two steps, for a caller
// that keeps what it made of a node's allocs between snapshots
// (scheduler.VersionedNodeAllocs): version names the list that read
// returns, and is the same in two snapshots of the store only when the
// list is. It is the watch channel of the index tree's node that holds
// the node's live allocs: the store's trees are copy-on-write, a written
// alloc copies every tree node on its path, and each copy gets a channel
// of its own, so an unchanged channel is an unchanged subtree. A view of a
// write transaction, whose new tree nodes may change in place before it
// commits, gives a nil version.
func (s *Snapshot) LiveAllocsByNodeVersion(nodeID string) (any, func() ([]*structs.Allocation, error), error) {
	it, err := s.txn.Get(TableAllocs, "node", nodeID, true)
	if err != nil {
		return nil, nil, fmt.Errorf("state: %s lookup: %w", TableAllocs, err)
	}
	ch := it.WatchCh()
	s.watch(ch)
	read := func() ([]*structs.Allocation, error) {
		var out []*structs.Allocation
		for obj := it.Next(); obj != nil; obj = it.Next() {
			out = append(out, obj.(*structs.Allocation))
		}
		return out, nil
	}
	if s.writing || ch == nil {
		return nil, read, nil
	}
	return ch, read, nil
}

// allocsByID returns the live and the stopped allocations of a liveIndex
// key, merged into ID order.
func allocsByID(s *Snapshot, index string, args ...any) ([]*structs.Allocation, error) {
	live, err := list[*structs.Allocation](s, TableAllocs, index, append(args, true)...)
	if err != nil {
		return nil, err
	}
	stopped, err := list[*structs.Allocation](s, TableAllocs, index, append(args, false)...)
	if err != nil {
		return nil, err
	}
	return mergeByID(live, stopped), nil
}

// mergeByID merges two lists that are each in ID order.
func mergeByID(a, b []*structs.Allocation) []*structs.Allocation {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]*structs.Allocation, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0].ID < a[0].ID {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// AllocsByDeployment returns the deployment's allocations, by ID. They
// are found through the job index (a deployment's allocations are its
// job's), as AllocsByEval finds an eval's; a deployment no longer stored
// is looked for in every allocation.
func (s *Snapshot) AllocsByDeployment(deploymentID string) ([]*structs.Allocation, error) {
	d, err := s.DeploymentByID(deploymentID)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return filterAllocs(s, func(a *structs.Allocation) bool { return a.DeploymentID == deploymentID }, "id")
	}
	return s.deploymentAllocs(d)
}

// deploymentAllocs returns d's allocations through its job's, whether or
// not d itself is stored yet.
func (s *Snapshot) deploymentAllocs(d *structs.Deployment) ([]*structs.Allocation, error) {
	return filterAllocs(s, func(a *structs.Allocation) bool { return a.DeploymentID == d.ID }, "job", d.Namespace, d.JobID)
}

// AllocsByEval returns the allocations the evaluation placed, by ID. They
// are found through the job index (an eval's allocations are its job's),
// which spares the store an index entry per allocation; an eval no longer
// stored is looked for in every allocation.
func (s *Snapshot) AllocsByEval(evalID string) ([]*structs.Allocation, error) {
	e, err := s.EvalByID(evalID)
	if err != nil {
		return nil, err
	}
	keep := func(a *structs.Allocation) bool { return a.EvalID == evalID }
	if e == nil {
		return filterAllocs(s, keep, "id")
	}
	return filterAllocs(s, keep, "job", e.Namespace, e.JobID)
}

// filterAllocs returns the allocations of index and args that keep
// accepts, by ID. A watching snapshot wakes
// on any change to the allocations it scanned.
func filterAllocs(s *Snapshot, keep func(*structs.Allocation) bool, index string, args ...any) ([]*structs.Allocation, error) {
	it, err := s.txn.Get(TableAllocs, index, args...)
	if err != nil {
		return nil, fmt.Errorf("state: %s lookup: %w", TableAllocs, err)
	}
	s.watch(it.WatchCh())
	var out []*structs.Allocation
	for obj := it.Next(); obj != nil; obj = it.Next() {
		if a := obj.(*structs.Allocation); keep(a) {
			out = append(out, a)
		}
	}
	// The job and node indexes list a key's live allocations first.
	if !slices.IsSortedFunc(out, compareAllocIDs) {
		slices.SortFunc(out, compareAllocIDs)
	}
	return out, nil
}

func compareAllocIDs(a, b *structs.Allocation) int { return strings.Compare(a.ID, b.ID) }

// AllocsByIDPrefix returns the allocations whose ID starts with prefix.
func (s *Snapshot) AllocsByIDPrefix(prefix string) ([]*structs.Allocation, error) {
	return list[*structs.Allocation](s, TableAllocs, "id_prefix", prefix)
}
