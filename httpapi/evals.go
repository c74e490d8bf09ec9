package httpapi

import (
	"net/http"
	"sort"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The evaluation reads, as Nomad's:
//
//	GET /v1/evaluations[?prefix=ab12][&per_page=&next_token=] → []*structs.Evaluation, paged as Nomad's
//	GET /v1/evaluation/{id}[?related=true] → *structs.Evaluation; 404 if unknown; with related,
//	                                         RelatedEvals: the evaluations linked to it
//	GET /v1/evaluation/{id}/allocations   → []*structs.AllocationListStub; [] for an unknown evaluation
//
// All are blocking queries.

func init() {
	register(
		route{"GET /v1/evaluations", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).evalsList},
		route{"GET /v1/evaluation/{id}", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).evalInfo},
		route{"GET /v1/evaluation/{id}/allocations", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).evalAllocations},
	)
}

func (s *Server) evalsList(w http.ResponseWriter, r *http.Request) (any, error) {
	return listRead(s, w, r, listing[*structs.Evaluation]{
		table:     state.TableEvals,
		all:       (*state.Snapshot).Evals,
		byPrefix:  (*state.Snapshot).EvalsByIDPrefix,
		namespace: func(e *structs.Evaluation) string { return e.Namespace },
		key:       func(e *structs.Evaluation) string { return e.ID },
		answer:    func(kept []*structs.Evaluation) any { return sortedEvals(kept) },
	})
}

// evalByPath returns the evaluation the path names, or a 404 with the
// evals table's index.
func evalByPath(r *http.Request, snap *state.Snapshot) (*structs.Evaluation, uint64, error) {
	id := r.PathValue("id")
	e, err := snap.EvalByID(id)
	if err != nil {
		return nil, 0, err
	}
	if e == nil {
		idx, err := snap.Index(state.TableEvals)
		if err != nil {
			return nil, 0, err
		}
		return nil, idx, Errorf(http.StatusNotFound, "eval not found: %s", id)
	}
	if err := checkNamespace(r, e.Namespace); err != nil {
		return nil, e.ModifyIndex, err
	}
	return e, e.ModifyIndex, nil
}

func (s *Server) evalInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	related, err := queryBool(r, "related")
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		e, idx, err := evalByPath(r, snap)
		if err != nil {
			return nil, idx, err
		}
		if !related {
			return e, idx, nil
		}
		rel, err := relatedEvals(snap, e)
		if err != nil {
			return nil, 0, err
		}
		return &evalWithRelated{Evaluation: e, RelatedEvals: rel}, idx, nil
	})
}

// evalWithRelated is an evaluation with ?related=true, as Nomad's: the
// evaluations linked to it, through NextEval, PreviousEval and
// BlockedEval, one from another.
type evalWithRelated struct {
	*structs.Evaluation
	RelatedEvals []*evalStub
}

// evalStub is Nomad's EvaluationStub.
type evalStub struct {
	ID, Namespace, Type, TriggeredBy, JobID, NodeID, DeploymentID string
	Priority                                                      int
	Status, StatusDescription                                     string
	WaitUntil                                                     time.Time
	NextEval, PreviousEval, BlockedEval                           string
	CreateIndex, ModifyIndex                                      uint64
	CreateTime, ModifyTime                                        int64
}

// relatedEvals walks e's links (both ways, each evaluation once) and
// answers the evaluations reached, e left out, by creation.
func relatedEvals(snap *state.Snapshot, e *structs.Evaluation) ([]*evalStub, error) {
	seen := map[string]bool{e.ID: true}
	queue := []*structs.Evaluation{e}
	out := []*evalStub{}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, id := range []string{cur.NextEval, cur.PreviousEval, cur.BlockedEval} {
			if id == "" || seen[id] {
				continue
			}
			seen[id] = true
			next, err := snap.EvalByID(id)
			if err != nil {
				return nil, err
			}
			if next == nil {
				continue
			}
			queue = append(queue, next)
			out = append(out, &evalStub{ID: next.ID, Namespace: next.Namespace, Type: next.Type, TriggeredBy: next.TriggeredBy,
				JobID: next.JobID, NodeID: next.NodeID, DeploymentID: next.DeploymentID, Priority: next.Priority,
				Status: next.Status, StatusDescription: next.StatusDescription, WaitUntil: next.WaitUntil,
				NextEval: next.NextEval, PreviousEval: next.PreviousEval, BlockedEval: next.BlockedEval,
				CreateIndex: next.CreateIndex, ModifyIndex: next.ModifyIndex, CreateTime: next.CreateTime, ModifyTime: next.ModifyTime})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex < out[j].CreateIndex })
	return out, nil
}

func (s *Server) evalAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		e, err := snap.EvalByID(r.PathValue("id"))
		if err != nil {
			return nil, 0, err
		}
		if e == nil {
			// As Nomad's: an unknown evaluation has no allocations.
			idx, err := snap.Index(state.TableAllocs)
			return []*structs.AllocationListStub{}, idx, err
		}
		if err := checkNamespace(r, e.Namespace); err != nil {
			return nil, e.ModifyIndex, err
		}
		allocs, err := snap.AllocsByEval(e.ID)
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.Index(state.TableAllocs)
		return allocStubs(allocs), idx, err
	})
}
