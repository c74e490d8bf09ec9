// Package stateview adapts the replicated state store to the narrow read
// interface of the deployment watcher (deployment.State), so that the
// watcher's core never imports the store.
package stateview

import (
	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// View reads the current store for the watcher. Every read takes a fresh
// O(1) snapshot, adds what it read to the caller's watch set, and adds the
// store's abandon channel too, so that a snapshot restore (which swaps the
// store) wakes the watcher.
type View struct {
	store func() *state.Store
}

// New returns a view over the store that store returns at each read (the
// FSM's current store, which a restore replaces).
func New(store func() *state.Store) *View { return &View{store: store} }

var _ deployment.State = (*View)(nil)

// read runs fn on a snapshot that watches into ws.
func (v *View) read(ws deployment.WatchSet, fn func(*state.Snapshot) error) error {
	s := v.store()
	mws, ok := ws.(memdb.WatchSet)
	if !ok {
		mws = memdb.NewWatchSet()
		defer func() {
			for ch := range mws {
				ws.Add(ch)
			}
		}()
	}
	mws.Add(s.AbandonCh())
	return fn(s.Snapshot().WithWatch(mws))
}

// ActiveDeployments returns the running and paused deployments.
func (v *View) ActiveDeployments(ws deployment.WatchSet) ([]*structs.Deployment, error) {
	var out []*structs.Deployment
	err := v.read(ws, func(s *state.Snapshot) error {
		all, err := s.Deployments()
		for _, d := range all {
			if d.Active() {
				out = append(out, d)
			}
		}
		return err
	})
	return out, err
}

// DeploymentByID returns the deployment, or nil.
func (v *View) DeploymentByID(ws deployment.WatchSet, id string) (d *structs.Deployment, err error) {
	err = v.read(ws, func(s *state.Snapshot) error { d, err = s.DeploymentByID(id); return err })
	return d, err
}

// JobByID returns the job's current version, or nil.
func (v *View) JobByID(ws deployment.WatchSet, namespace, id string) (j *structs.Job, err error) {
	err = v.read(ws, func(s *state.Snapshot) error { j, err = s.JobByID(namespace, id); return err })
	return j, err
}

// JobByIDAndVersion returns one stored version of the job, or nil.
func (v *View) JobByIDAndVersion(ws deployment.WatchSet, namespace, id string, version uint64) (j *structs.Job, err error) {
	err = v.read(ws, func(s *state.Snapshot) error { j, err = s.JobByIDAndVersion(namespace, id, version); return err })
	return j, err
}

// LatestStableJob returns the newest stable version of the job, or nil.
func (v *View) LatestStableJob(ws deployment.WatchSet, namespace, id string) (j *structs.Job, err error) {
	err = v.read(ws, func(s *state.Snapshot) error { j, err = s.LatestStableJobVersion(namespace, id); return err })
	return j, err
}

// AllocsByDeployment returns the deployment's allocations.
func (v *View) AllocsByDeployment(ws deployment.WatchSet, id string) (a []*structs.Allocation, err error) {
	err = v.read(ws, func(s *state.Snapshot) error { a, err = s.AllocsByDeployment(id); return err })
	return a, err
}

// AllocByID returns one allocation, or nil.
func (v *View) AllocByID(ws deployment.WatchSet, id string) (a *structs.Allocation, err error) {
	err = v.read(ws, func(s *state.Snapshot) error { a, err = s.AllocByID(id); return err })
	return a, err
}

// AllocsByJob returns the job's allocations, of every version.
func (v *View) AllocsByJob(ws deployment.WatchSet, namespace, jobID string) (a []*structs.Allocation, err error) {
	err = v.read(ws, func(s *state.Snapshot) error { a, err = s.AllocsByJob(namespace, jobID); return err })
	return a, err
}

// PassEvals returns the job's unfinished evaluations and its newest
// finished one (deployment.State.PassEvals).
func (v *View) PassEvals(ws deployment.WatchSet, namespace, jobID string) (e []*structs.Evaluation, err error) {
	err = v.read(ws, func(s *state.Snapshot) error {
		if e, err = s.PendingEvalsByJob(namespace, jobID); err != nil {
			return err
		}
		last, err := s.LatestFinishedEvalByJob(namespace, jobID)
		if last != nil {
			e = append(e, last)
		}
		return err
	})
	return e, err
}
