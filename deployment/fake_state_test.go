package deployment

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/structs"
)

// fakeStore is an in-memory replicated state for the watcher tests: reads
// register one channel that is closed on every change, and the Writer side
// applies requests as the real store would, in outline.
type fakeStore struct {
	mu       sync.Mutex
	changed  chan struct{}
	index    uint64
	deps     map[string]*structs.Deployment
	jobs     map[string][]*structs.Job // versions, oldest first
	allocs   map[string]*structs.Allocation
	evals    []*structs.Evaluation
	log      []string // one line per write, in order
	reasons  []string // every wait reason written, "group: sentence"
	requests []any
	// failWrites makes the next n writes fail.
	failWrites int
	// jobAllocReads counts the reads of a job's allocations.
	jobAllocReads int
}

var errInjected = errors.New("injected write failure")

func newFakeStore() *fakeStore {
	return &fakeStore{
		changed: make(chan struct{}),
		deps:    map[string]*structs.Deployment{},
		jobs:    map[string][]*structs.Job{},
		allocs:  map[string]*structs.Allocation{},
	}
}

// mutate runs fn under the lock, bumps the index and wakes watchers.
func (f *fakeStore) mutate(fn func(index uint64)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	fn(f.index)
	f.refigure()
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeStore) read(ws WatchSet) {
	ws.Add(f.changed)
}

func (f *fakeStore) ActiveDeployments(ws WatchSet) ([]*structs.Deployment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read(ws)
	var out []*structs.Deployment
	for _, d := range f.deps {
		if d.Active() {
			out = append(out, d.Copy())
		}
	}
	return out, nil
}

func (f *fakeStore) DeploymentByID(ws WatchSet, id string) (*structs.Deployment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read(ws)
	return f.deps[id].Copy(), nil
}

func (f *fakeStore) JobByID(ws WatchSet, _, id string) (*structs.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read(ws)
	v := f.jobs[id]
	if len(v) == 0 {
		return nil, nil
	}
	return v[len(v)-1].Copy(), nil
}

func (f *fakeStore) JobByIDAndVersion(ws WatchSet, _, id string, version uint64) (*structs.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read(ws)
	for _, j := range f.jobs[id] {
		if j.Version == version {
			return j.Copy(), nil
		}
	}
	return nil, nil
}

func (f *fakeStore) LatestStableJob(ws WatchSet, _, id string) (*structs.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read(ws)
	v := f.jobs[id]
	for i := len(v) - 1; i >= 0; i-- {
		if v[i].Stable {
			return v[i].Copy(), nil
		}
	}
	return nil, nil
}

func (f *fakeStore) AllocsByDeployment(ws WatchSet, id string) ([]*structs.Allocation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read(ws)
	var out []*structs.Allocation
	for _, a := range f.allocs {
		if a.DeploymentID == id {
			out = append(out, a.Copy())
		}
	}
	return out, nil
}

func (f *fakeStore) AllocByID(ws WatchSet, id string) (*structs.Allocation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read(ws)
	for _, a := range f.allocs {
		if a.ID == id {
			return a.Copy(), nil
		}
	}
	return nil, nil
}

func (f *fakeStore) AllocsByJob(ws WatchSet, _, jobID string) ([]*structs.Allocation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read(ws)
	f.jobAllocReads++
	var out []*structs.Allocation
	for _, a := range f.allocs {
		if a.JobID == jobID {
			out = append(out, a.Copy())
		}
	}
	return out, nil
}

func (f *fakeStore) PassEvals(ws WatchSet, _, jobID string) ([]*structs.Evaluation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read(ws)
	var out []*structs.Evaluation
	var last *structs.Evaluation
	for _, e := range f.evals {
		switch {
		case e.JobID != jobID:
		case !e.Terminal():
			out = append(out, e.Copy())
		case last == nil || e.CreateIndex > last.CreateIndex:
			last = e
		}
	}
	if last != nil {
		out = append(out, last.Copy())
	}
	return out, nil
}

// write records and applies one request, or fails it when asked to.
func (f *fakeStore) write(line string, req any, apply func(index uint64)) error {
	f.mu.Lock()
	if f.failWrites > 0 {
		f.failWrites--
		f.log = append(f.log, "FAILED "+line)
		f.mu.Unlock()
		return errInjected
	}
	f.log = append(f.log, line)
	if line != "wait-reasons" {
		f.requests = append(f.requests, req)
	}
	f.mu.Unlock()
	f.mutate(apply)
	return nil
}

func (f *fakeStore) addEval(e *structs.Evaluation, index uint64) {
	if e == nil {
		return
	}
	c := e.Copy()
	c.CreateIndex, c.ModifyIndex = index, index
	f.evals = append(f.evals, c)
}

func (f *fakeStore) UpdateDeploymentStatus(_ context.Context, req *structs.DeploymentStatusUpdateRequest) error {
	u := req.DeploymentUpdate
	line := "status " + u.Status + ": " + u.StatusDescription
	if f.reasonOnly(req) {
		// A change of wait reasons alone (wait_reason.go), with the pass
		// that rides with it if any: the log says "eval" for that pass,
		// as if written alone, and the reasons go to the reasons log.
		line = "wait-reasons"
		if req.Eval != nil {
			line = "eval"
		}
	}
	f.mu.Lock()
	for _, name := range sortedKeys(u.WaitReasons) {
		f.reasons = append(f.reasons, name+": "+u.WaitReasons[name])
	}
	f.mu.Unlock()
	return f.write(line, req, func(index uint64) {
		d := f.deps[u.DeploymentID].Copy()
		at := time.Unix(0, req.UpdatedAt)
		wasPaused := d.Status == structs.DeploymentStatusPaused
		if wasPaused && u.Status == structs.DeploymentStatusRunning {
			for _, s := range d.TaskGroups {
				s.RequireProgressBy = at.Add(s.ProgressDeadline)
			}
		}
		switch {
		case u.Status == structs.DeploymentStatusPaused && !wasPaused:
			d.PausedAt, d.ResumeAt = at, u.ResumeAt
		case u.Status == structs.DeploymentStatusPaused:
			d.ResumeAt = u.ResumeAt
		default:
			d.PausedAt, d.ResumeAt = time.Time{}, time.Time{}
		}
		for name, n := range u.CheckpointsReached {
			d.TaskGroups[name].CheckpointsReached = n
		}
		for name, n := range u.FailuresAtPause {
			d.TaskGroups[name].FailuresAtPause = n
		}
		for name, zones := range u.ZoneStates {
			for zone, st := range zones {
				d.TaskGroups[name].Zone(zone).State = st
			}
		}
		for name, zones := range u.ZoneDoneAt {
			for zone, at := range zones {
				d.TaskGroups[name].Zone(zone).DoneAt = at
			}
		}
		for name, zones := range u.ZoneFailedReset {
			for _, zone := range zones {
				d.TaskGroups[name].Zone(zone).Failed = 0
			}
		}
		for name, st := range u.GroupStates {
			d.TaskGroups[name].State = st
		}
		for name, at := range u.GroupDoneAt {
			d.TaskGroups[name].DoneAt = at
		}
		for name, r := range u.WaitReasons {
			d.TaskGroups[name].WaitReason = r
		}
		d.Status, d.StatusDescription = u.Status, u.StatusDescription
		d.ModifyIndex, d.ModifyTime = index, req.UpdatedAt
		f.deps[d.ID] = d
		if req.Job != nil {
			v := f.jobs[req.Job.ID]
			j := req.Job.Copy()
			j.Version = v[len(v)-1].Version + 1
			f.jobs[j.ID] = append(v, j)
		}
		f.addEval(req.Eval, index)
	})
}

func (f *fakeStore) PromoteDeployment(_ context.Context, req *structs.DeploymentPromoteRequest) error {
	return f.write("promote", req, func(index uint64) {
		d := f.deps[req.DeploymentID].Copy()
		for _, name := range req.Groups {
			s := d.TaskGroups[name]
			s.Promoted = true
			s.RequireProgressBy = req.PromotedAt.Add(s.ProgressDeadline)
		}
		d.StatusDescription = structs.DeploymentStatusDescriptionRunning
		f.deps[d.ID] = d
		f.addEval(req.Eval, index)
	})
}

func (f *fakeStore) UpdateJobStability(_ context.Context, req *structs.JobStabilityRequest) error {
	return f.write("stable", req, func(uint64) {
		for _, j := range f.jobs[req.JobID] {
			if j.Version == req.JobVersion {
				j.Stable = req.Stable
			}
		}
	})
}

func (f *fakeStore) UpdateAllocDesiredTransition(_ context.Context, req *structs.AllocUpdateDesiredTransitionRequest) error {
	ids := make([]string, 0, len(req.Allocs))
	for id := range req.Allocs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return f.write("reschedule", req, func(index uint64) {
		for id, tr := range req.Allocs {
			a := f.allocs[id].Copy()
			a.DesiredTransition = *tr
			a.ModifyIndex = index
			f.allocs[id] = a
		}
		for _, e := range req.Evals {
			f.addEval(e, index)
		}
	})
}

func (f *fakeStore) UpsertEvals(_ context.Context, req *structs.EvalUpdateRequest) error {
	return f.write("eval", req, func(index uint64) {
		for _, e := range req.Evals {
			f.addEval(e, index)
		}
	})
}

// setHealth records a client's health report for an allocation.
func (f *fakeStore) setHealth(id string, healthy bool, at time.Time) {
	f.mutate(func(index uint64) {
		a := f.allocs[id].Copy()
		a.DeploymentStatus.Healthy = &healthy
		a.DeploymentStatus.Timestamp = at
		a.DeploymentStatus.ModifyIndex = index
		a.ModifyIndex = index
		f.allocs[id] = a
		if d := f.deps[a.DeploymentID]; d != nil && healthy {
			d = d.Copy()
			s := d.TaskGroups[a.TaskGroup]
			s.HealthyAllocs++
			s.RequireProgressBy = at.Add(s.ProgressDeadline)
			f.deps[d.ID] = d
		}
	})
}

// writes returns the write log so far, without the writes of wait
// reasons alone (see waitReasonWrites).
func (f *fakeStore) writes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(f.log), func(l string) bool { return l == "wait-reasons" })
}

// waitReasonWrites returns the full write log (wait reasons alone are
// "wait-reasons") and every reason written, as "group: sentence".
func (f *fakeStore) waitReasonWrites() (log, reasons []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log), slices.Clone(f.reasons)
}

// reasonOnly reports whether a status update changes the stored
// deployment's wait reasons and nothing else.
func (f *fakeStore) reasonOnly(req *structs.DeploymentStatusUpdateRequest) bool {
	u := req.DeploymentUpdate
	f.mu.Lock()
	d := f.deps[u.DeploymentID]
	f.mu.Unlock()
	return d != nil && len(u.WaitReasons) > 0 && req.Job == nil &&
		u.Status == d.Status && u.StatusDescription == d.StatusDescription &&
		len(u.CheckpointsReached) == 0 && len(u.FailuresAtPause) == 0 && len(u.ZoneStates) == 0 &&
		len(u.ZoneDoneAt) == 0 && len(u.ZoneFailedReset) == 0 && len(u.GroupStates) == 0 &&
		len(u.GroupDoneAt) == 0 && u.ResumeAt.Equal(d.ResumeAt)
}

func (f *fakeStore) deployment(id string) *structs.Deployment {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deps[id].Copy()
}

// refigure sets the live figures of every active deployment from the
// allocations, as the real store keeps them (the caller holds f.mu, or
// owns f). A deployment whose figures did not move is left as it is.
func (f *fakeStore) refigure() {
	for id, d := range f.deps {
		if !d.Active() {
			continue
		}
		c := d.Copy()
		var allocs []*structs.Allocation
		for _, a := range f.allocs {
			allocs = append(allocs, a)
		}
		c.CountLiveFigures(allocs)
		if !reflect.DeepEqual(c, d) {
			f.deps[id] = c
		}
	}
}

func (f *fakeStore) UpdateDeploymentAnalysis(_ context.Context, req *structs.DeploymentAnalysisRequest) error {
	return f.write("analysis runs: "+formatRunUpdates(req.Updates), req, func(index uint64) {
		f.applyAnalysis(req, index)
	})
}

func (f *fakeStore) RecordAnalysisMeasurement(_ context.Context, req *structs.DeploymentAnalysisRequest) error {
	return f.write("analysis measurement: "+formatRunUpdates(req.Updates), req, func(index uint64) {
		f.applyAnalysis(req, index)
	})
}

func (f *fakeStore) applyAnalysis(req *structs.DeploymentAnalysisRequest, index uint64) {
	d := f.deps[req.DeploymentID]
	if d == nil || !d.Active() {
		return
	}
	c := d.Copy()
	if structs.ApplyAnalysisRequest(c, req) {
		c.ModifyIndex = index
		f.deps[c.ID] = c
		f.addEval(req.Eval, index)
	}
}
