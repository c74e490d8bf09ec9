package apiclient

import (
	"context"
	"net/url"
	"strconv"

	"github.com/droverhq/drover/jobdiff"
	"github.com/droverhq/drover/structs"
)

// Versions returns the job's stored versions, newest first.
func (j *Jobs) Versions(ctx context.Context, id string, q *QueryOptions) ([]*structs.Job, *QueryMeta, error) {
	var out struct{ Versions []*structs.Job }
	meta, err := j.c.Get(ctx, "/v1/job/"+url.PathEscape(id)+"/versions", q, &out)
	return out.Versions, meta, err
}

// VersionsWithDiffs returns the job's stored versions, newest first, and
// the server's diff of each version from the one before it (diffs[i] is
// from versions[i+1] to versions[i]).
//
// With against >= 0, diffs[i] is from version against to versions[i].
func (j *Jobs) VersionsWithDiffs(ctx context.Context, id string, against int64) ([]*structs.Job, []*jobdiff.JobDiff, error) {
	var out struct {
		Versions []*structs.Job
		Diffs    []*jobdiff.JobDiff
	}
	q := &QueryOptions{Params: map[string]string{"diffs": "true"}}
	if against >= 0 {
		q.Params["diff_version"] = strconv.FormatInt(against, 10)
	}
	_, err := j.c.Get(ctx, "/v1/job/"+url.PathEscape(id)+"/versions", q, &out)
	return out.Versions, out.Diffs, err
}

// Deployments returns the job's deployments, newest first; all adds those
// of an earlier job of the same ID.
func (j *Jobs) Deployments(ctx context.Context, id string, all bool, q *QueryOptions) ([]*structs.Deployment, *QueryMeta, error) {
	qq := QueryOptions{}
	if q != nil {
		qq = *q
	}
	if all {
		params := map[string]string{"all": "true"}
		for k, v := range qq.Params {
			params[k] = v
		}
		qq.Params = params
	}
	var out []*structs.Deployment
	meta, err := j.c.Get(ctx, "/v1/job/"+url.PathEscape(id)+"/deployments", &qq, &out)
	return out, meta, err
}

// LatestDeployment returns the job's newest deployment, nil if it has
// none.
func (j *Jobs) LatestDeployment(ctx context.Context, id string, q *QueryOptions) (*structs.Deployment, *QueryMeta, error) {
	var out *structs.Deployment
	meta, err := j.c.Get(ctx, "/v1/job/"+url.PathEscape(id)+"/deployment", q, &out)
	return out, meta, err
}

// Revert registers version of the job again as a new version; with
// enforcePriorVersion set, only if the current version is that one.
func (j *Jobs) Revert(ctx context.Context, id string, version uint64, enforcePriorVersion *uint64) (*structs.JobRevertResponse, error) {
	var out structs.JobRevertResponse
	body := map[string]any{"JobID": id, "JobVersion": version, "EnforcePriorVersion": enforcePriorVersion}
	if _, err := j.c.Put(ctx, "/v1/job/"+url.PathEscape(id)+"/revert", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Stable marks a job version stable or not.
func (j *Jobs) Stable(ctx context.Context, id string, version uint64, stable bool) (*structs.JobStabilityResponse, error) {
	var out structs.JobStabilityResponse
	body := map[string]any{"JobID": id, "JobVersion": version, "Stable": stable}
	if _, err := j.c.Put(ctx, "/v1/job/"+url.PathEscape(id)+"/stable", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
