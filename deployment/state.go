package deployment

import (
	"context"

	"github.com/droverhq/drover/structs"
)

// WatchSet collects the watch channels of what a read touched; a closed
// channel means that data changed. go-memdb's WatchSet fits it, and the
// watcher always passes one, so an adapter over the state store may hand
// it on with a type assertion to memdb.WatchSet.
type WatchSet interface {
	Add(ch <-chan struct{})
}

// State is the read-only view of replicated state the watcher needs. Each
// call adds the watch channels of what it read to ws. Reads within one pass
// may come from different snapshots: the watcher is level-triggered, so a
// change between two reads only causes another pass.
type State interface {
	// ActiveDeployments returns the running and paused deployments.
	ActiveDeployments(ws WatchSet) ([]*structs.Deployment, error)
	// DeploymentByID returns the deployment, or nil.
	DeploymentByID(ws WatchSet, id string) (*structs.Deployment, error)
	// JobByID returns the job's current version, or nil if purged.
	JobByID(ws WatchSet, namespace, id string) (*structs.Job, error)
	// JobByIDAndVersion returns one version of the job, or nil.
	JobByIDAndVersion(ws WatchSet, namespace, id string, version uint64) (*structs.Job, error)
	// LatestStableJob returns the newest version marked stable, or nil.
	LatestStableJob(ws WatchSet, namespace, id string) (*structs.Job, error)
	// AllocsByDeployment returns the deployment's allocations.
	AllocsByDeployment(ws WatchSet, id string) ([]*structs.Allocation, error)
	// AllocByID returns one allocation, or nil.
	AllocByID(ws WatchSet, id string) (*structs.Allocation, error)
	// AllocsByJob returns the job's allocations, of every version.
	AllocsByJob(ws WatchSet, namespace, jobID string) ([]*structs.Allocation, error)
	// PassEvals returns the job's evaluations that have not finished and
	// its newest finished one (by CreateIndex): what passIndex needs, of
	// the few hundred a rollout leaves until they are collected.
	PassEvals(ws WatchSet, namespace, jobID string) ([]*structs.Evaluation, error)
}

// Writer makes the watcher's replicated writes. Each call is one log entry
// (one atomic store transaction); the watcher stamps IDs and times into
// the request before the call.
type Writer interface {
	// UpdateDeploymentStatus changes status and description, optionally
	// registering a reverted job and an evaluation in the same entry.
	UpdateDeploymentStatus(ctx context.Context, req *structs.DeploymentStatusUpdateRequest) error
	// PromoteDeployment promotes canary groups, with an evaluation.
	PromoteDeployment(ctx context.Context, req *structs.DeploymentPromoteRequest) error
	// UpdateJobStability marks a job version stable.
	UpdateJobStability(ctx context.Context, req *structs.JobStabilityRequest) error
	// UpdateAllocDesiredTransition marks allocations for replacement, with
	// an evaluation.
	UpdateAllocDesiredTransition(ctx context.Context, req *structs.AllocUpdateDesiredTransitionRequest) error
	// UpsertEvals stores evaluations.
	UpsertEvals(ctx context.Context, req *structs.EvalUpdateRequest) error
	// UpdateDeploymentAnalysis changes analysis runs: runs started,
	// phases set, wait reasons.
	UpdateDeploymentAnalysis(ctx context.Context, req *structs.DeploymentAnalysisRequest) error
	// RecordAnalysisMeasurement writes a run with its new measurement.
	RecordAnalysisMeasurement(ctx context.Context, req *structs.DeploymentAnalysisRequest) error
}
