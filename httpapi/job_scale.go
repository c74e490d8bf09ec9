package httpapi

import (
	"context"
	"net/http"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// A job's scaling, Nomad's paths and shapes:
//
//	PUT|POST /v1/job/{id}/scale {"Count": 5, "Target": {"Group": "web"},
//	    "Message", "Error", "Meta"} → JobRegisterResponse: the group's new
//	    count as a new job version, rolled out as a count change in a job
//	    file; without Count, a scaling event is recorded and nothing else.
//	GET /v1/job/{id}/scale → {"JobID", "Namespace", "JobCreateIndex",
//	    "JobModifyIndex", "JobStopped", "TaskGroups": {"web": {"Desired",
//	    "Placed", "Running", "Healthy", "Unhealthy", "Events": [...]}}}

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/job/{id}/scale", writeRoute, nsCap(acl.NamespaceCapabilityScaleJob), (*Server).jobScale})
	}
	register(route{"GET /v1/job/{id}/scale", readRoute, nsCap(acl.NamespaceCapabilityReadJobScaling), (*Server).jobScaleStatus})
}

// ScaleRequest is a scaling asked through the API.
type ScaleRequest struct {
	Namespace, JobID, Group string
	Count                   *int64
	Message                 string
	Error                   bool
	Meta                    map[string]any
}

// JobScaleBackend is how a server scales a job (server.Leader.ScaleJob):
// invalid requests wrap an error the HTTP layer answers with 400, an
// unknown job 404, a job changed meanwhile 409.
type JobScaleBackend interface {
	ScaleJob(ctx context.Context, req ScaleRequest) (*JobRegisterResponse, error)
}

func (s *Server) jobScale(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.registrationAllowed(r); err != nil {
		return nil, err
	}
	sb, ok := s.backend.(JobScaleBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: job scaling unavailable")
	}
	var body struct {
		Count          *int64
		Target         map[string]string
		Message        string
		Error          bool
		Meta           map[string]any
		PolicyOverride bool
		Namespace      string
		Region         string
	}
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	// Target.Namespace and the body's Namespace were resolved with the
	// query's (namespace.go): o.Namespace is the one they all say.
	if v := body.Target["Job"]; v != "" && v != r.PathValue("id") {
		return nil, Errorf(http.StatusBadRequest, "Target.Job %q does not match the path's job %q", v, r.PathValue("id"))
	}
	out, err := sb.ScaleJob(r.Context(), ScaleRequest{
		Namespace: o.Namespace, JobID: r.PathValue("id"), Group: body.Target["Group"],
		Count: body.Count, Message: body.Message, Error: body.Error, Meta: body.Meta,
	})
	if err != nil {
		return nil, err
	}
	s.setMeta(w, out.Index)
	return out, nil
}

// TaskGroupScaleStatus is one group's scale status, as Nomad's.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []*structs.ScalingEvent
}

// JobScaleStatusResponse answers GET /v1/job/{id}/scale.
type JobScaleStatusResponse struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]*TaskGroupScaleStatus
}

func (s *Server) jobScaleStatus(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.MaxIndex(state.TableJobs, state.TableAllocs, state.TableDeployments, state.TableScaling)
		if err != nil {
			return nil, 0, err
		}
		job, err := snap.JobByID(o.Namespace, id)
		if err != nil {
			return nil, 0, err
		}
		if job == nil {
			return nil, idx, errJobNotFound(id)
		}
		out := &JobScaleStatusResponse{JobID: job.ID, Namespace: job.Namespace, JobCreateIndex: job.CreateIndex,
			JobModifyIndex: job.JobModifyIndex, JobStopped: job.Stop, TaskGroups: map[string]*TaskGroupScaleStatus{}}
		for _, tg := range job.TaskGroups {
			out.TaskGroups[tg.Name] = &TaskGroupScaleStatus{Desired: tg.Count, Events: []*structs.ScalingEvent{}}
		}
		allocs, err := snap.AllocsByJob(job.Namespace, job.ID)
		if err != nil {
			return nil, 0, err
		}
		for _, a := range allocs {
			g := out.TaskGroups[a.TaskGroup]
			if g == nil || a.TerminalStatus() || a.Job == nil || a.Job.CreateIndex != job.CreateIndex {
				continue
			}
			g.Placed++
			if a.ClientStatus == structs.AllocClientStatusRunning {
				g.Running++
			}
			switch {
			case a.IsHealthy():
				g.Healthy++
			case a.IsUnhealthy():
				g.Unhealthy++
			}
		}
		events, err := snap.ScalingEventsByJob(job.Namespace, job.ID)
		if err != nil {
			return nil, 0, err
		}
		if events != nil {
			for name, evs := range events.ScalingEvents {
				if g := out.TaskGroups[name]; g != nil {
					g.Events = evs
				}
			}
		}
		return out, idx, nil
	})
}
