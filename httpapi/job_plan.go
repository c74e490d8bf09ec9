package httpapi

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"time"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/jobdiff"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// PUT|POST /v1/job/{id}/plan {"Job": {...}, "Diff": bool} answers what
// registering the job would do, without writing anything: the reconciler
// and the placer run on one snapshot of the local state (the leader's, as
// this is a write route) exactly as a scheduling worker would, and the
// answer is Nomad's JobPlanResponse: per-group DesiredTGUpdates, the
// placements that would find no node (FailedTGAllocs) and the job's current
// JobModifyIndex (for `job run -check-index`). With "Diff", a job diff
// down to task groups: each group's type (Added, Deleted, Edited, None)
// and its update counts, as Nomad's TaskGroupDiff.Updates; field-level
// diffs are not computed.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/job/{id}/plan", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).jobPlan})
	}
}

// JobPlanResponse is Nomad's plan answer.
type JobPlanResponse struct {
	JobModifyIndex     uint64
	CreatedEvals       []*structs.Evaluation
	Diff               *JobDiff
	Annotations        *PlanAnnotations
	FailedTGAllocs     map[string]*structs.AllocationMetric
	NextPeriodicLaunch time.Time
	Warnings           string
	// RolloutPlan (drover) lists, per group in order, the batches the
	// rollout will run if nothing fails (scheduler.PlanRollout).
	RolloutPlan []structs.RolloutBatch
}

// PlanAnnotations carries the per-group counts of a plan.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*scheduler.DesiredUpdates
	PreemptedAllocs  []*structs.AllocationListStub
}

// Update names of TaskGroupDiff.Updates, as Nomad's.
const (
	UpdateTypeIgnore            = "ignore"
	UpdateTypeCreate            = "create"
	UpdateTypeDestroy           = "destroy"
	UpdateTypeMigrate           = "migrate"
	UpdateTypeCanary            = "canary"
	UpdateTypeInplaceUpdate     = "in-place update"
	UpdateTypeDestructiveUpdate = "create/destroy update"
)

// JobDiff is Nomad's plan diff: every field that changes, down to tasks,
// with each group's update counts.
type JobDiff = jobdiff.JobDiff

// TaskGroupDiff is one group's part of the plan diff.
type TaskGroupDiff = jobdiff.TaskGroupDiff

func (s *Server) jobPlan(w http.ResponseWriter, r *http.Request) (any, error) {
	var body struct {
		Job            json.RawMessage
		Diff           bool
		PolicyOverride bool
	}
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if len(body.Job) == 0 || string(body.Job) == "null" {
		return nil, Errorf(http.StatusBadRequest, "request has no job")
	}
	job, diags, err := jobspec.ParseAPIJob(body.Job)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "invalid job: %w", err)
	}
	if job == nil {
		return nil, Errorf(http.StatusBadRequest, "request has no job")
	}
	if id := r.PathValue("id"); job.ID != id {
		return nil, Errorf(http.StatusBadRequest, "job ID %q does not match the path's %q", job.ID, id)
	}
	if job.IsMultiregion() {
		// A multi-region job is planned as this region's copy (the CLI
		// plans it in each of its regions, as Nomad's).
		if job = job.ForRegion(s.localRegion()); job == nil {
			return nil, Errorf(http.StatusBadRequest, "Job.Multiregion: names no region %q (this server's); plan it with -region set to one of its regions", s.localRegion())
		}
	}
	if err := checkJobVersion(r, job); err != nil {
		return nil, err
	}
	if err := s.checkAnalysisAddress(job); err != nil {
		return nil, err
	}
	if err := s.checkJobNodePool(job); err != nil {
		return nil, err
	}
	snap := s.backend.State().Snapshot()
	if err := checkJobNamespace(snap, job); err != nil {
		return nil, err
	}
	out, err := planJob(snap, job, s.now(), body.Diff)
	if err != nil {
		return nil, err
	}
	var warnings []string
	for _, d := range diags {
		warnings = append(warnings, d.String())
	}
	out.Warnings = joinWarnings(strings.Join(warnings, "\n"), out.Warnings)
	idx, err := snap.LatestIndex()
	if err != nil {
		return nil, err
	}
	s.setMeta(w, idx)
	return out, nil
}

// planJob runs the reconciler and the placer for job on snap without
// writing anything.
func planJob(snap *state.Snapshot, job *structs.Job, now time.Time, withDiff bool) (*JobPlanResponse, error) {
	if job.Namespace == "" {
		job.Namespace = structs.DefaultNamespace
	}
	existing, err := snap.JobByID(job.Namespace, job.ID)
	if err != nil {
		return nil, err
	}
	latest, err := snap.LatestIndex()
	if err != nil {
		return nil, err
	}
	// The job as the store would hold it once registered.
	candidate := job.Copy()
	switch {
	case existing == nil:
		candidate.Version = 0
		candidate.CreateIndex, candidate.ModifyIndex, candidate.JobModifyIndex = latest+1, latest+1, latest+1
	case !job.SpecChanged(existing):
		candidate = existing
	default:
		candidate.Version = existing.Version + 1
		candidate.CreateIndex = existing.CreateIndex
		candidate.ModifyIndex, candidate.JobModifyIndex = latest+1, latest+1
	}
	in := scheduler.Input{Job: candidate, JobID: job.ID, Now: now, IDs: structs.GenerateUUID, EvalPriority: job.Priority}
	if in.Allocs, err = snap.AllocsByJob(job.Namespace, job.ID); err != nil {
		return nil, err
	}
	if in.Deployment, err = snap.LatestDeploymentByJob(job.Namespace, job.ID); err != nil {
		return nil, err
	}
	if in.Nodes, err = snap.Nodes(); err != nil {
		return nil, err
	}
	plan := scheduler.Reconcile(in)
	out := &JobPlanResponse{Annotations: &PlanAnnotations{DesiredTGUpdates: map[string]*scheduler.DesiredUpdates{}}}
	if existing != nil {
		out.JobModifyIndex = existing.JobModifyIndex
	}
	for name, u := range plan.DesiredTGUpdates {
		c := *u
		out.Annotations.DesiredTGUpdates[name] = &c
	}
	for _, tg := range job.TaskGroups {
		if tg != nil && out.Annotations.DesiredTGUpdates[tg.Name] == nil {
			out.Annotations.DesiredTGUpdates[tg.Name] = &scheduler.DesiredUpdates{}
		}
	}
	if len(plan.Place) > 0 && !candidate.Stopped() {
		h := fnv.New64a()
		_, _ = h.Write([]byte(job.ID))
		// As a scheduling pass: the job's allocs, and a node's others
		// only when a placement looks at that node.
		placed := scheduler.NewPlacerLazy(in.Nodes, in.Allocs, snap.AllocsByNode, h.Sum64()).Place(candidate, plan, now)
		if len(placed.Failed) > 0 {
			out.FailedTGAllocs = placed.Failed
			// The evaluation the scheduling pass would make, as Nomad's
			// plan answers it: a blocked one, to place the rest once
			// capacity comes (server/worker.go makes it the same way).
			out.CreatedEvals = []*structs.Evaluation{{
				ID: structs.GenerateUUID(), Namespace: candidate.Namespace, Priority: candidate.Priority, Type: candidate.Type,
				TriggeredBy: structs.EvalTriggerQueuedAllocs, JobID: candidate.ID, JobModifyIndex: candidate.JobModifyIndex,
				Status: structs.EvalStatusBlocked, StatusDescription: "created to place remaining allocations",
				CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
			}}
		}
	}
	if withDiff {
		out.Diff = planDiff(existing, job, out.Annotations.DesiredTGUpdates)
	}
	out.RolloutPlan = scheduler.PlanRollout(in)
	if out.RolloutPlan == nil {
		out.RolloutPlan = []structs.RolloutBatch{}
	}
	out.Warnings = joinWarnings(out.Warnings, unknownZoneWarnings(candidate, in.Nodes))
	return out, nil
}

// unknownZoneWarnings warns of zones an update block's order names that no
// node has: a typo rolls those zones fewest first instead.
func unknownZoneWarnings(job *structs.Job, nodes []*structs.Node) string {
	var out []string
	for _, tg := range job.TaskGroups {
		if tg == nil || tg.Update == nil || tg.Update.Zones == nil || len(tg.Update.Zones.Order) == 0 {
			continue
		}
		z := tg.Update.Zones
		have := map[string]bool{}
		for _, n := range nodes {
			have[structs.ZoneOf(n, z.Attribute)] = true
		}
		for _, name := range z.Order {
			if !have[name] {
				out = append(out, fmt.Sprintf("* Group %q: update.zones.order names zone %q, which no node has (%s)", tg.Name, name, z.Attribute))
			}
		}
	}
	return strings.Join(out, "\n")
}

func joinWarnings(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// planDiff compares the job with its current version field by field
// (contextual, as Nomad's plan: the CLI shows unchanged fields with
// -verbose) and adds each group's update counts.
func planDiff(old, job *structs.Job, updates map[string]*scheduler.DesiredUpdates) *JobDiff {
	d := jobdiff.Jobs(old, job, true)
	for _, g := range d.TaskGroups {
		g.Updates = updateCounts(updates[g.Name])
	}
	return d
}

// updateCounts names the non-zero counts as Nomad's TaskGroupDiff.Updates.
func updateCounts(u *scheduler.DesiredUpdates) map[string]uint64 {
	if u == nil {
		return nil
	}
	m := map[string]uint64{}
	for name, n := range map[string]uint64{
		UpdateTypeIgnore: u.Ignore, UpdateTypeCreate: u.Place, UpdateTypeDestroy: u.Stop,
		UpdateTypeMigrate: u.Migrate, UpdateTypeCanary: u.Canary,
		UpdateTypeInplaceUpdate: u.InPlaceUpdate, UpdateTypeDestructiveUpdate: u.DestructiveUpdate,
	} {
		if n > 0 {
			m[name] = n
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
