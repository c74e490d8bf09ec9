package apiclient

import (
	"context"
	"net/url"

	"github.com/droverhq/drover/structs"
)

// JobScaleStatus is a job's scale status per group, as Nomad's.
type JobScaleStatus struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]*TaskGroupScaleStatus
}

// TaskGroupScaleStatus is one group's counts and scaling events, newest
// first.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []*structs.ScalingEvent
}

// Scale sets a group's count (POST /v1/job/{id}/scale), with an optional
// message recorded in the scaling event.
func (j *Jobs) Scale(ctx context.Context, id, group string, count int64, message string) (*JobRegisterResponse, error) {
	var out JobRegisterResponse
	body := map[string]any{"Count": count, "Target": map[string]string{"Group": group}, "Message": message}
	if _, err := j.c.Put(ctx, "/v1/job/"+url.PathEscape(id)+"/scale", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ScaleStatus reads a job's scale status and scaling events.
func (j *Jobs) ScaleStatus(ctx context.Context, id string, q *QueryOptions) (*JobScaleStatus, *QueryMeta, error) {
	var out JobScaleStatus
	meta, err := j.c.Get(ctx, "/v1/job/"+url.PathEscape(id)+"/scale", q, &out)
	return &out, meta, err
}
