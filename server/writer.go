package server

import (
	"context"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// raftWriter is the deployment watcher's Writer: each method is one Raft
// entry of the matching type.
type raftWriter struct{ l *Leader }

var _ deployment.Writer = raftWriter{}

func (w raftWriter) write(ctx context.Context, t fsm.MessageType, req any) error {
	_, _, err := w.l.apply(ctx, t, req)
	return err
}

// UpdateDeploymentStatus writes a DeploymentStatusUpdateRequest.
func (w raftWriter) UpdateDeploymentStatus(ctx context.Context, req *structs.DeploymentStatusUpdateRequest) error {
	return w.write(ctx, fsm.DeploymentStatusUpdateRequestType, req)
}

// PromoteDeployment writes a DeploymentPromoteRequest.
func (w raftWriter) PromoteDeployment(ctx context.Context, req *structs.DeploymentPromoteRequest) error {
	return w.write(ctx, fsm.DeploymentPromoteRequestType, req)
}

// UpdateJobStability writes a JobStabilityRequest.
func (w raftWriter) UpdateJobStability(ctx context.Context, req *structs.JobStabilityRequest) error {
	return w.write(ctx, fsm.JobStabilityRequestType, req)
}

// UpdateAllocDesiredTransition writes an
// AllocUpdateDesiredTransitionRequest.
func (w raftWriter) UpdateAllocDesiredTransition(ctx context.Context, req *structs.AllocUpdateDesiredTransitionRequest) error {
	return w.write(ctx, fsm.AllocUpdateDesiredTransitionRequestType, req)
}

// UpsertEvals writes an EvalUpdateRequest.
func (w raftWriter) UpsertEvals(ctx context.Context, req *structs.EvalUpdateRequest) error {
	return w.write(ctx, fsm.EvalUpdateRequestType, req)
}

// UpdateDeploymentAnalysis writes a DeploymentAnalysisRequest of runs
// started or ended.
func (w raftWriter) UpdateDeploymentAnalysis(ctx context.Context, req *structs.DeploymentAnalysisRequest) error {
	return w.write(ctx, fsm.AnalysisRunRequestType, req)
}

// RecordAnalysisMeasurement writes a DeploymentAnalysisRequest carrying a
// measurement.
func (w raftWriter) RecordAnalysisMeasurement(ctx context.Context, req *structs.DeploymentAnalysisRequest) error {
	return w.write(ctx, fsm.AnalysisMeasurementRequestType, req)
}
