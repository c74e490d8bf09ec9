package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/structs"
)

// PUT|POST /v1/job/{id}/restart restarts a job as a deployment of its
// current version (website/commands/job-restart.md): the body is a
// JobRestartRequest {"Groups", "Tasks", "AllTasks", "Reschedule",
// "BatchSize": "2" or "25%", "BatchWait": "30s" or "ask", "OnError": "ask"
// or "fail", "Plan"}; the answer {"DeploymentID", "EvalID",
// "EvalCreateIndex", "Index"}, or with Plan {"RestartPlan": [batches in
// RolloutPlan's shape], "Index"} and nothing written. 400 for an unknown
// group or task, a zero batch size, a job with no running allocations, a
// batch job with Reschedule, or while a deployment of the job is active;
// 404 for an unknown job.
//
// It needs alloc-lifecycle in the namespace, as Nomad's job restart,
// with or without Reschedule: Nomad's CLI restarts each alloc through the
// alloc restart endpoint, or with -reschedule stops it through the alloc
// stop endpoint, and both need alloc-lifecycle (as drover's do).

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/job/{id}/restart", writeRoute, nsCap(acl.NamespaceCapabilityAllocLifecycle), (*Server).jobRestart})
	}
}

// RestartRequest is a job restart asked through the API.
type RestartRequest struct {
	Namespace, JobID string
	Groups, Tasks    []string
	AllTasks         bool
	Reschedule       bool
	BatchSize        string
	BatchWait        time.Duration
	BatchWaitAsk     bool
	OnError          string
	Plan             bool
}

// RestartResponse answers a job restart.
type RestartResponse struct {
	DeploymentID    string `json:",omitempty"`
	EvalID          string `json:",omitempty"`
	EvalCreateIndex uint64 `json:",omitempty"`
	// RestartPlan, with Plan, is the batches the restart would run.
	RestartPlan []structs.RolloutBatch `json:",omitempty"`
	Index       uint64
}

// JobRestartBackend is how a server restarts a job
// (server.Leader.RestartJob): an invalid request is a 400, an unknown job
// a 404, a change of the job in between a 409.
type JobRestartBackend interface {
	RestartJob(ctx context.Context, req RestartRequest) (*RestartResponse, error)
}

func (s *Server) jobRestart(w http.ResponseWriter, r *http.Request) (any, error) {
	var body struct {
		Groups     []string
		Tasks      []string
		AllTasks   bool
		Reschedule bool
		BatchSize  string
		BatchWait  string
		OnError    string
		Plan       bool
	}
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	rb, ok := s.backend.(JobRestartBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: job restart unavailable")
	}
	req := RestartRequest{
		Namespace: o.Namespace, JobID: r.PathValue("id"), Groups: body.Groups, Tasks: body.Tasks,
		AllTasks: body.AllTasks, Reschedule: body.Reschedule, BatchSize: body.BatchSize, OnError: body.OnError, Plan: body.Plan,
	}
	switch body.BatchWait {
	case "":
	case "ask":
		req.BatchWaitAsk = true
	default:
		d, err := time.ParseDuration(body.BatchWait)
		if err != nil || d < 0 {
			return nil, Errorf(http.StatusBadRequest, "BatchWait %q is not a duration or \"ask\"", body.BatchWait)
		}
		req.BatchWait = d
	}
	out, err := rb.RestartJob(r.Context(), req)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, out.Index)
	return out, nil
}
