package scheduler

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// Input is everything one reconciliation looks at: a consistent snapshot
// plus the time and an ID source, so the result is a function of the input.
type Input struct {
	// Job is the job's latest version; nil or Stop means stopped.
	Job *structs.Job
	// JobID names the job when Job is nil.
	JobID string
	// Allocs are the job's allocations, of every version. Those the
	// servers stopped or evicted may be left out (a worker leaves them
	// out: nothing but StoppedRanVersion depends on them), with
	// StoppedRanVersion set from them.
	Allocs []*structs.Allocation
	// StoppedRanVersion reports that an allocation left out of Allocs ran
	// the job's current version: a placement of a version that has run
	// before is not a new rollout, and starts no deployment (as Nomad's
	// reconciler decides from all of the job's allocations).
	StoppedRanVersion bool
	// Deployment is the job's latest deployment, possibly terminal or for
	// an older version.
	Deployment *structs.Deployment
	// Nodes are the cluster's nodes (ready, down, draining); an alloc whose
	// node is missing or down is lost.
	Nodes []*structs.Node
	// Table, when set, is a NodeTable built from Nodes (the same list):
	// the pass looks nodes up in it instead of indexing Nodes itself.
	Table *NodeTable
	// Now is the evaluation time.
	Now time.Time
	// IDs mints IDs for allocations, deployments and evaluations.
	IDs func() string
	// EvalID and EvalPriority describe the evaluation being processed.
	EvalID       string
	EvalPriority int
}

// Reconcile compares the job with its allocations and returns the changes
// that bring them together. It is pure: no clock, no randomness beyond
// in.IDs, no I/O.
func Reconcile(in Input) *Plan {
	r := newReconciler(in)
	r.run()
	return r.plan
}

type reconciler struct {
	in    Input
	job   *structs.Job
	plan  *Plan
	nodes map[string]*structs.Node

	// deployment is the current version's deployment when it is still
	// relevant (running, paused or failed); nil otherwise.
	deployment *structs.Deployment
	paused     bool
	failed     bool
	// pending is set while a multi-region job's version waits for its
	// region's turn (multiregion.go): the version places nothing, the old
	// version's allocations stay.
	pending bool
	// hadRunning is set when some alloc already runs the job's version.
	hadRunning bool
	// allPlaced holds the groups whose AllPlaced changes in the running
	// deployment (markAllPlaced).
	allPlaced map[string]bool
	// newStates collects group states for a deployment to create, or for
	// groups missing from the current one.
	newStates map[string]*structs.DeploymentState
	// kinds caches update decisions per old job version.
	kinds map[kindKey]UpdateKind
	// followups are delayed reschedules waiting for an evaluation.
	followups []pendingFollowup
	// staggerWake is the earliest time a group's next batch may start
	// after its stagger; zero when no group waits for one.
	staggerWake time.Time
	// gate, for a job that rolls its groups in order, names the groups
	// that may start batches in this pass; nil: all may.
	gate map[string]bool
	// restart is the job restart the current deployment runs, nil when it
	// rolls out a version (restart.go).
	restart *structs.RestartSpec
	// groupAllocs and groupIdx are allocsByGroup's slices of each group's
	// allocs and of their parsed indexes (groupIndexes).
	groupAllocs map[string][]*structs.Allocation
	groupIdx    map[string][]int
	// restartDone is the job's latest deployment when it is a finished
	// restart with -reschedule: allocs it replaced by surge may still run
	// beside their replacements (restart.go).
	restartDone *structs.Deployment
}

type kindKey struct {
	version, createIndex uint64
	group                string
}

func newReconciler(in Input) *reconciler {
	if in.IDs == nil {
		in.IDs = structs.GenerateUUID
	}
	jobID := in.JobID
	if in.Job != nil {
		jobID = in.Job.ID
	}
	r := &reconciler{
		in:        in,
		job:       in.Job,
		plan:      &Plan{EvalID: in.EvalID, JobID: jobID},
		newStates: map[string]*structs.DeploymentState{},
		kinds:     map[kindKey]UpdateKind{},
	}
	if in.Table != nil {
		// Read-only: r.nodes is never written after this.
		r.nodes = in.Table.byID
		return r
	}
	r.nodes = make(map[string]*structs.Node, len(in.Nodes))
	for _, n := range in.Nodes {
		if n != nil {
			r.nodes[n.ID] = n
		}
	}
	return r
}

func (r *reconciler) run() {
	// A periodic or parameterized job runs nothing itself: the leader
	// launches its children, each a job of its own.
	if r.job.Stopped() || r.job.IsParent() {
		r.stopAll()
		return
	}
	r.pickDeployment()
	r.holdForRegions()
	r.hadRunning = r.in.StoppedRanVersion || RanVersion(r.in.Allocs, r.job)
	byGroup := r.allocsByGroup()
	r.gate = r.groupGate(byGroup)
	if structs.PerNode(r.job.Type) {
		r.reconcileSystem(byGroup)
	} else {
		for _, tg := range r.job.TaskGroups {
			if tg == nil {
				continue
			}
			r.reconcileGroup(tg, byGroup[tg.Name])
			delete(byGroup, tg.Name)
		}
	}
	// Groups no longer in the job.
	for _, name := range sortedKeys(byGroup) {
		for _, a := range byGroup[name] {
			if !a.TerminalStatus() {
				r.stop(a, structs.AllocNotNeeded, "")
			}
		}
	}
	r.flushFollowups()
	r.flushStagger()
	r.finishDeployment()
}

// RanVersion reports whether one of allocs ran job's version (the same
// version of the same registration).
func RanVersion(allocs []*structs.Allocation, job *structs.Job) bool {
	if job == nil {
		return false
	}
	for _, a := range allocs {
		if a != nil && a.Job != nil && a.Job.Version == job.Version && a.Job.CreateIndex == job.CreateIndex {
			return true
		}
	}
	return false
}

// stopAll handles a stopped (or purged) job: every live alloc stops and an
// active deployment is cancelled.
func (r *reconciler) stopAll() {
	if d := r.in.Deployment; d.Active() {
		r.plan.DeploymentUpdates = append(r.plan.DeploymentUpdates, DeploymentStatusUpdate{
			DeploymentID: d.ID, Status: structs.DeploymentStatusCancelled,
			StatusDescription: structs.DeploymentStatusDescriptionStoppedJob,
		})
	}
	for _, a := range sortAllocs(r.in.Allocs) {
		if !a.TerminalStatus() {
			r.stop(a, structs.AllocJobStopped, "")
		}
	}
}

// pickDeployment cancels a deployment of an older version and keeps the
// current version's deployment unless it is finished.
func (r *reconciler) pickDeployment() {
	d := r.in.Deployment
	if d == nil {
		return
	}
	if (d.JobVersion != r.job.Version || d.JobCreateIndex != r.job.CreateIndex) && !r.restartScaled(d) {
		if d.Active() {
			r.plan.DeploymentUpdates = append(r.plan.DeploymentUpdates, DeploymentStatusUpdate{
				DeploymentID: d.ID, Status: structs.DeploymentStatusCancelled,
				StatusDescription: structs.DeploymentStatusDescriptionNewerJob,
			})
		}
		return
	}
	switch d.Status {
	case structs.DeploymentStatusRunning:
	case structs.DeploymentStatusPaused:
		r.paused = true
	case structs.DeploymentStatusPending:
		r.paused, r.pending = true, true
	case structs.DeploymentStatusFailed:
		r.failed = true
	default:
		if d.Restart != nil && d.Restart.Reschedule && d.Status == structs.DeploymentStatusSuccessful {
			r.restartDone = d
		}
		return
	}
	r.deployment = d
	if d.Restart != nil {
		// The restarted groups roll by the restart's strategy (its batch
		// size and wait); allocs keep the job itself (r.in.Job).
		r.restart = d.Restart
		r.job = d.Restart.ApplyTo(r.job)
	}
}

// groupState returns the current deployment's state for a group, or the
// state this pass is creating, or nil.
func (r *reconciler) groupState(group string) *structs.DeploymentState {
	if s := r.newStates[group]; s != nil {
		return s
	}
	if r.deployment != nil {
		return r.deployment.TaskGroups[group]
	}
	return nil
}

// wantState records that a group takes part in this version's deployment.
func (r *reconciler) wantState(tg *structs.TaskGroup, total, canaries int) *structs.DeploymentState {
	if s := r.newStates[tg.Name]; s != nil {
		return s
	}
	s := &structs.DeploymentState{
		AutoRevert:       tg.Update.AutoRevert,
		AutoPromote:      tg.Update.AutoPromote,
		ProgressDeadline: tg.Update.ProgressDeadline,
		OnFailure:        tg.Update.FailureAction(),
		DesiredTotal:     total,
		DesiredCanaries:  canaries,
	}
	r.orderGroupState(s, tg.Name)
	r.newStates[tg.Name] = s
	return s
}

// finishDeployment creates the version's deployment (or updates the
// current one with new groups) and stamps deployment IDs on placements and
// in-place updates of the groups it tracks.
func (r *reconciler) finishDeployment() {
	r.regionDeploymentWithoutChanges()
	var d *structs.Deployment
	switch {
	case len(r.newStates) > 0 && r.deployment == nil:
		d = &structs.Deployment{
			ID:                 r.in.IDs(),
			Namespace:          r.job.Namespace,
			JobID:              r.job.ID,
			JobVersion:         r.job.Version,
			JobModifyIndex:     r.job.ModifyIndex,
			JobSpecModifyIndex: r.job.JobModifyIndex,
			JobCreateIndex:     r.job.CreateIndex,
			TaskGroups:         r.newStates,
			Status:             structs.DeploymentStatusRunning,
			StatusDescription:  structs.DeploymentStatusDescriptionRunning,
			CreateTime:         r.in.Now.UnixNano(),
			ModifyTime:         r.in.Now.UnixNano(),
		}
		r.multiregionDeployment(d)
		if v := r.job.RevertOf; v != nil {
			rv := *v
			d.RevertOf = &rv
			d.StatusDescription = structs.RollbackDescription(rv)
		}
		r.plan.Deployment = d
	case len(r.newStates) > 0:
		d = r.deployment.Copy()
		if d.TaskGroups == nil {
			d.TaskGroups = map[string]*structs.DeploymentState{}
		}
		for g, s := range r.newStates {
			d.TaskGroups[g] = s
		}
		d.ModifyTime = r.in.Now.UnixNano()
		r.plan.Deployment = d
	default:
		d = r.deployment
	}
	if d == nil {
		return
	}
	if len(r.allPlaced) > 0 {
		if r.plan.Deployment != nil {
			for g, v := range r.allPlaced {
				if s := d.TaskGroups[g]; s != nil {
					s.AllPlaced = v
				}
			}
		} else {
			// No status: the stored one stays (an operator may pause it
			// before this plan is applied).
			r.plan.DeploymentUpdates = append(r.plan.DeploymentUpdates, DeploymentStatusUpdate{
				DeploymentID: d.ID, AllPlaced: r.allPlaced,
			})
		}
	}
	if r.plan.Deployment != nil && d.Status == structs.DeploymentStatusRunning && d.RequiresPromotion() {
		d.StatusDescription = structs.DeploymentStatusDescriptionRunningNeedsPromotion
		if allAutoPromote(d) {
			d.StatusDescription = structs.DeploymentStatusDescriptionRunningAutoPromotion
		}
	}
	for i := range r.plan.Place {
		if _, ok := d.TaskGroups[r.plan.Place[i].TaskGroup]; ok {
			r.plan.Place[i].DeploymentID = d.ID
		}
	}
	for _, a := range r.plan.InPlace {
		if _, ok := d.TaskGroups[a.TaskGroup]; ok && a.DeploymentID != d.ID {
			a.DeploymentID = d.ID
			a.DeploymentStatus = nil
		}
	}
}

func allAutoPromote(d *structs.Deployment) bool {
	for _, s := range d.TaskGroups {
		if s.DesiredCanaries > 0 && !s.AutoPromote {
			return false
		}
	}
	return true
}

// allocsByGroup returns the job's allocs by group, each group sorted (see
// sortAllocs). Allocs the servers stopped or evicted are left out: every
// use of the groups' allocs skips them (classify, the system pass, the
// stop of groups no longer in the job), and a rollout's replaced allocs
// are half of the job's until they are collected, so sorting them was
// half of each pass's sort.
func (r *reconciler) allocsByGroup() map[string][]*structs.Allocation {
	keys := make([]keyedAlloc, 0, len(r.in.Allocs))
	for i, a := range r.in.Allocs {
		if a != nil && a.DesiredStatus != structs.AllocDesiredStatusStop && a.DesiredStatus != structs.AllocDesiredStatusEvict {
			keys = append(keys, keyedAlloc{a: a, idx: a.Index(), pos: i})
		}
	}
	sorted := sortKeyed(keys)
	// One slice of allocs and one of their parsed indexes, cut by group
	// (sortKeyed keeps each group's allocs together).
	all := make([]*structs.Allocation, len(sorted))
	idx := make([]int, len(sorted))
	for i, k := range sorted {
		all[i], idx[i] = k.a, k.idx
	}
	m := map[string][]*structs.Allocation{}
	r.groupIdx, r.groupAllocs = map[string][]int{}, map[string][]*structs.Allocation{}
	for start := 0; start < len(all); {
		g := all[start].TaskGroup
		end := start + 1
		for end < len(all) && all[end].TaskGroup == g {
			end++
		}
		m[g] = all[start:end:end]
		r.groupAllocs[g], r.groupIdx[g] = m[g], idx[start:end:end]
		start = end
	}
	return m
}

// sortAllocs returns the non-nil allocs ordered by group, index and ID
// (ties keep their input order). A worker sorts every alloc of the job,
// old stopped ones included, in each pass, so this is done in linear
// time where it can be: each alloc's index is parsed from its name once,
// the allocs are bucketed by group and then by index (indexes are small:
// below the group's count, give or take), and only allocs sharing an
// index (an old one and its replacement) are compared by ID.
func sortAllocs(in []*structs.Allocation) []*structs.Allocation {
	keys := make([]keyedAlloc, 0, len(in))
	for i, a := range in {
		if a != nil {
			keys = append(keys, keyedAlloc{a: a, idx: a.Index(), pos: i})
		}
	}
	sorted := sortKeyed(keys)
	out := make([]*structs.Allocation, len(sorted))
	for i, k := range sorted {
		out[i] = k.a
	}
	return out
}

// sortKeyed orders keyed allocs as sortAllocs does, reusing keys.
func sortKeyed(keys []keyedAlloc) []keyedAlloc {
	groups := map[string]int{}
	for _, k := range keys {
		groups[k.a.TaskGroup]++
	}
	out := make([]keyedAlloc, 0, len(keys))
	if len(groups) <= 1 {
		return appendByIndex(out, keys)
	}
	// Several groups: lay the keys out group by group (in name order,
	// input order kept within a group), then sort each group's run.
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	slices.Sort(names)
	start := make(map[string]int, len(names))
	runs := make([]int, len(names)+1)
	for i, g := range names {
		start[g] = runs[i]
		runs[i+1] = runs[i] + groups[g]
	}
	byGroup := make([]keyedAlloc, len(keys))
	for _, k := range keys {
		byGroup[start[k.a.TaskGroup]] = k
		start[k.a.TaskGroup]++
	}
	for i := range names {
		out = appendByIndex(out, byGroup[runs[i]:runs[i+1]])
	}
	return out
}

// keyedAlloc is an alloc with its sort keys.
type keyedAlloc struct {
	a   *structs.Allocation
	idx int
	pos int
}

// compareKeyed orders by index, ID, then input position.
func compareKeyed(x, y keyedAlloc) int {
	if c := cmp.Compare(x.idx, y.idx); c != 0 {
		return c
	}
	if c := strings.Compare(x.a.ID, y.a.ID); c != 0 {
		return c
	}
	return cmp.Compare(x.pos, y.pos)
}

// appendByIndex appends one group's allocs to out in compareKeyed order:
// a counting sort on the index when the indexes are dense enough, a
// comparison sort otherwise.
func appendByIndex(out []keyedAlloc, ks []keyedAlloc) []keyedAlloc {
	maxIdx := -1
	for _, k := range ks {
		if k.idx < -1 {
			// Index returns -1 at least; anything lower is not a
			// parsed index: sort by comparison.
			maxIdx = 1 << 62
			break
		}
		maxIdx = max(maxIdx, k.idx)
	}
	if maxIdx > 4*len(ks)+1024 {
		slices.SortFunc(ks, compareKeyed)
		return append(out, ks...)
	}
	// Bucket b holds index b-1 (so that -1, an unparsable name, comes
	// first). Within a bucket the input order is kept, then allocs that
	// share an index are ordered by ID.
	start := make([]int, maxIdx+3)
	for _, k := range ks {
		start[k.idx+2]++
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	sorted := make([]keyedAlloc, len(ks))
	next := slices.Clone(start[:len(start)-1])
	for _, k := range ks {
		sorted[next[k.idx+1]] = k
		next[k.idx+1]++
	}
	for b := 0; b+1 < len(start); b++ {
		if bucket := sorted[start[b]:start[b+1]]; len(bucket) > 1 {
			slices.SortFunc(bucket, compareKeyed)
		}
	}
	if len(out) == 0 {
		return sorted
	}
	return append(out, sorted...)
}

// stop records a stop and counts it.
func (r *reconciler) stop(a *structs.Allocation, desc, clientStatus string) {
	r.plan.Stop = append(r.plan.Stop, StopAlloc{Alloc: a, Description: desc, ClientStatus: clientStatus})
	r.plan.desired(a.TaskGroup).Stop++
}

// updateKind caches UpdateKindFor per old job version.
func (r *reconciler) updateKind(a *structs.Allocation) UpdateKind {
	if a.Job == nil {
		return UpdateDestructive
	}
	if r.restartPending(a) {
		if r.restart.Reschedule {
			return UpdateDestructive
		}
		return UpdateRestart
	}
	k := kindKey{a.Job.Version, a.Job.CreateIndex, a.TaskGroup}
	if v, ok := r.kinds[k]; ok {
		return v
	}
	v := UpdateKindFor(a.Job, r.in.Job, a.TaskGroup)
	r.kinds[k] = v
	return v
}

// nodeLost reports whether the alloc's node is gone or down.
func (r *reconciler) nodeLost(a *structs.Allocation) bool {
	n := r.nodes[a.NodeID]
	return n == nil || n.Status == structs.NodeStatusDown
}

// inplace records an in-place update of a to the job's version.
func (r *reconciler) inplace(a *structs.Allocation) {
	c := a.Copy()
	c.Job = r.in.Job
	c.EvalID = r.in.EvalID
	r.plan.InPlace = append(r.plan.InPlace, c)
	r.plan.desired(a.TaskGroup).InPlaceUpdate++
}
