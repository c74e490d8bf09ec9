package httpapi

import (
	"net/http"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The read endpoints of one job beyond its spec: its allocations, its
// evaluations and the summary of its allocations' client statuses. Each is
// a blocking query; an unknown job is a 404.
//
//	GET /v1/job/{id}/allocations  → []*structs.AllocationListStub
//	GET /v1/job/{id}/evaluations  → []*structs.Evaluation
//	GET /v1/job/{id}/summary      → *structs.JobSummary

func init() {
	register(
		route{"GET /v1/job/{id}/allocations", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).jobAllocations},
		route{"GET /v1/job/{id}/evaluations", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).jobEvaluations},
		route{"GET /v1/job/{id}/summary", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).jobSummary},
	)
}

// errJobNotFound is the 404 of the job endpoints, worded as Nomad's.
func errJobNotFound(id string) error {
	return Errorf(http.StatusNotFound, "job not found: %s", id)
}

// jobQuery runs fn as a blocking query on the job named by the path, with
// the index the highest of tables; fn sees the job, never nil.
func (s *Server) jobQuery(w http.ResponseWriter, r *http.Request, tables []string,
	fn func(snap *state.Snapshot, job *structs.Job) (any, error)) (any, error) {
	return s.jobQueryOr(w, r, tables, nil, fn)
}

// jobQueryOr is jobQuery answering unknown, for a job that does not
// exist, when it is not nil (a list: Nomad answers an unknown job's
// allocations and evaluations with an empty one) instead of a 404.
func (s *Server) jobQueryOr(w http.ResponseWriter, r *http.Request, tables []string, unknown any,
	fn func(snap *state.Snapshot, job *structs.Job) (any, error)) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.MaxIndex(tables...)
		if err != nil {
			return nil, 0, err
		}
		job, err := snap.JobByID(o.Namespace, id)
		if err != nil {
			return nil, 0, err
		}
		if job == nil && unknown != nil {
			return unknown, idx, nil
		}
		if job == nil {
			return nil, idx, errJobNotFound(id)
		}
		out, err := fn(snap, job)
		return out, idx, err
	})
}

func (s *Server) jobAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.jobQueryOr(w, r, []string{state.TableJobs, state.TableAllocs}, []*structs.AllocationListStub{},
		func(snap *state.Snapshot, job *structs.Job) (any, error) {
			allocs, err := snap.AllocsByJob(job.Namespace, job.ID)
			if err != nil {
				return nil, err
			}
			return allocStubs(allocs), nil
		})
}

func (s *Server) jobEvaluations(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.jobQueryOr(w, r, []string{state.TableJobs, state.TableEvals}, []*structs.Evaluation{},
		func(snap *state.Snapshot, job *structs.Job) (any, error) {
			evals, err := snap.EvalsByJob(job.Namespace, job.ID)
			if err != nil {
				return nil, err
			}
			return sortedEvals(evals), nil
		})
}

func (s *Server) jobSummary(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.jobQuery(w, r, []string{state.TableJobs, state.TableJobSummary},
		func(snap *state.Snapshot, job *structs.Job) (any, error) {
			sum, err := snap.JobSummaryByID(job.Namespace, job.ID)
			if err != nil || sum != nil {
				return sum, err
			}
			// Only a restore whose count failed leaves a job without one.
			return snap.RecountJobSummary(job.Namespace, job.ID)
		})
}

// allocStubs returns the list form of allocs, by ID.
func allocStubs(allocs []*structs.Allocation) []*structs.AllocationListStub {
	out := make([]*structs.AllocationListStub, 0, len(allocs))
	for _, a := range allocs {
		out = append(out, a.Stub())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// sortedEvals returns evals by ID, never nil.
func sortedEvals(evals []*structs.Evaluation) []*structs.Evaluation {
	out := make([]*structs.Evaluation, len(evals))
	copy(out, evals)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
