package apiclient

import (
	"context"
	"net/url"

	"github.com/droverhq/drover/jobdiff"
	"github.com/droverhq/drover/structs"
)

// JobPlanResponse is the answer of Plan, Nomad's shape.
type JobPlanResponse struct {
	JobModifyIndex uint64
	Diff           *jobdiff.JobDiff
	Annotations    *PlanAnnotations
	FailedTGAllocs map[string]*structs.AllocationMetric
	Warnings       string
	// RolloutPlan (drover) lists the batches the rollout will run if
	// nothing fails.
	RolloutPlan []structs.RolloutBatch
}

// PlanAnnotations carries the per-group counts of a plan.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
}

// DesiredUpdates counts one group's changes.
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
}

// Changes reports whether the counts create, stop or replace anything.
func (u *DesiredUpdates) Changes() bool {
	return u != nil && u.Place+u.Migrate+u.Stop+u.InPlaceUpdate+u.DestructiveUpdate+u.Canary > 0
}

// Plan asks what registering job would do, writing nothing. job may be a
// *structs.Job or any value encoding to Nomad's API job JSON; id is its ID.
func (j *Jobs) Plan(ctx context.Context, id string, job any, diff bool) (*JobPlanResponse, error) {
	var out JobPlanResponse
	if _, err := j.c.Put(ctx, "/v1/job/"+url.PathEscape(id)+"/plan", map[string]any{"Job": job, "Diff": diff}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ParseHCL parses a job file on the agent; variables is the content of a
// variables file. An invalid job is a *StatusError (400) listing every
// located problem.
func (j *Jobs) ParseHCL(ctx context.Context, jobHCL, variables string) (*structs.Job, error) {
	var out structs.Job
	body := map[string]any{"JobHCL": jobHCL, "Variables": variables, "Canonicalize": true}
	if _, err := j.c.Put(ctx, "/v1/jobs/parse", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
