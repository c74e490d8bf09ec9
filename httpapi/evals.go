package httpapi

import (
	"net/http"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The evaluation reads, as Nomad's:
//
//	GET /v1/evaluations[?prefix=ab12]     → []*structs.Evaluation
//	GET /v1/evaluation/{id}               → *structs.Evaluation; 404 if unknown
//	GET /v1/evaluation/{id}/allocations   → []*structs.AllocationListStub
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
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		e, idx, err := evalByPath(r, snap)
		if err != nil {
			return nil, idx, err
		}
		return e, idx, nil
	})
}

func (s *Server) evalAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		e, _, err := evalByPath(r, snap)
		if err != nil {
			idx, _ := snap.Index(state.TableEvals)
			return nil, idx, err
		}
		allocs, err := snap.AllocsByEval(e.ID)
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.Index(state.TableAllocs)
		return allocStubs(allocs), idx, err
	})
}
