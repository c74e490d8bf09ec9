package httpapi

import (
	"context"
	"net/http"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

func init() {
	register(
		route{"PUT /v1/jobs", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).jobRegister},
		route{"POST /v1/jobs", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).jobRegister},
		route{"GET /v1/jobs", readRoute, nsCap(acl.NamespaceCapabilityListJobs), (*Server).jobsList},
		route{"GET /v1/job/{id}", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).jobInfo},
	)
}

// JobRegisterResponse is the answer of PUT /v1/jobs, in Nomad's shape.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
	Index           uint64
	// Regions, drover's own, is each region's answer to the registration
	// of a multi-region job (multiregion_register.go).
	Regions []*MultiregionRegistration `json:",omitempty"`
}

// JobRegisterBackend is how a server registers a job: the leader stamps
// the job-register evaluation (ID, trigger, times) and writes job and
// evaluation in one entry (server.Leader.RegisterJob), checking the stored
// job's modify index in the same write when enforceIndex is set. Job
// registration goes through it when the Backend implements it; otherwise
// (test backends) registerJob stamps the evaluation itself.
type JobRegisterBackend interface {
	// RegisterJob registers a job version with its evaluation and answers
	// with the evaluation's ID and the indexes of the write; a failed index
	// check wraps state.ErrConflict.
	RegisterJob(ctx context.Context, job *structs.Job, enforceIndex bool, jobModifyIndex uint64) (*JobRegisterResponse, error)
}

// jobRegister serves PUT /v1/jobs: Nomad's registration envelope
// ({"Job": …} and the request fields, see ParseRegisterEnvelope).
func (s *Server) jobRegister(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.RegisterFromEnvelope(w, r, "")
}

// registerJob registers job through the backend's JobRegisterBackend, or
// stamps the evaluation here for a backend without one.
func (s *Server) registerJob(ctx context.Context, job *structs.Job, enforceIndex bool, jobModifyIndex uint64) (*JobRegisterResponse, error) {
	if rb, ok := s.backend.(JobRegisterBackend); ok {
		return rb.RegisterJob(ctx, job, enforceIndex, jobModifyIndex)
	}
	// Only a revert marks the version it registers (RevertOf).
	job = job.Copy()
	job.RevertOf = nil
	now := s.now().UnixNano()
	eval := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   job.Namespace,
		Priority:    structs.EvalPriorityOr(ctx, job.Priority),
		Type:        job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       job.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now,
		ModifyTime:  now,
	}
	req := &structs.JobRegisterRequest{
		Job: job, Eval: eval, SubmitTime: now, EnforceIndex: enforceIndex, JobModifyIndex: jobModifyIndex,
		Submission: structs.JobSubmissionFrom(ctx)}
	var resp any
	var index uint64
	var err error
	if v, ok := structs.JobVersionFrom(ctx); ok {
		resp, index, err = s.backend.Apply(ctx, fsm.JobRegisterAtVersionRequestType, &structs.JobRegisterAtVersionRequest{Register: *req, Version: v})
	} else {
		resp, index, err = s.backend.Apply(ctx, fsm.JobRegisterRequestType, req)
	}
	if err != nil {
		return nil, err
	}
	out := &JobRegisterResponse{EvalID: eval.ID, EvalCreateIndex: index, Index: index}
	if res, ok := resp.(*structs.JobRegisterResult); ok && res != nil {
		out.JobModifyIndex = res.JobModifyIndex
	}
	return out, nil
}

// jobsList answers the stubs of the jobs in the namespace, by ID, filtered
// by ?prefix. Each stub carries its job's summary, as Nomad's always does
// (the nomad CLI reads JobSummary.Namespace when it resolves a job by
// prefix), read from the summaries the store keeps: the query reads one
// row per job and wakes only when a job or a summary changes.
func (s *Server) jobsList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, jobsListQuery(o))
}

// jobsListQuery is GET /v1/jobs as a query on a snapshot; the index is the
// higher of the jobs' and the summaries' tables.
func jobsListQuery(o QueryOptions) state.QueryFunc {
	return func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		jobs, err := snap.Jobs()
		if err != nil {
			return nil, 0, err
		}
		sums, err := snap.JobSummaries()
		if err != nil {
			return nil, 0, err
		}
		out := []*structs.JobListStub{}
		for _, j := range jobs {
			// Both lists are in (namespace, ID) order.
			for len(sums) > 0 && (sums[0].Namespace < j.Namespace ||
				sums[0].Namespace == j.Namespace && sums[0].JobID < j.ID) {
				sums = sums[1:]
			}
			if !o.matchNamespace(j.Namespace) || !o.matchPrefix(j.ID) {
				continue
			}
			var sum *structs.JobSummary
			if len(sums) > 0 && sums[0].Namespace == j.Namespace && sums[0].JobID == j.ID {
				sum = sums[0]
			} else if sum, err = snap.RecountJobSummary(j.Namespace, j.ID); err != nil {
				// Only a restore whose count failed leaves a job without one.
				return nil, 0, err
			}
			out = append(out, j.Stub(sum))
		}
		sort.Slice(out, func(a, b int) bool {
			if out[a].Namespace != out[b].Namespace {
				return out[a].Namespace < out[b].Namespace
			}
			return out[a].ID < out[b].ID
		})
		idx, err := snap.MaxIndex(state.TableJobs, state.TableJobSummary)
		return out, idx, err
	}
}

// jobInfo answers one job's current version; 404 if unknown.
func (s *Server) jobInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		job, err := snap.JobByID(o.Namespace, id)
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.Index(state.TableJobs)
		if err != nil {
			return nil, 0, err
		}
		if job == nil {
			return nil, idx, Errorf(http.StatusNotFound, "job not found")
		}
		return viewJob(job), idx, nil
	})
}
