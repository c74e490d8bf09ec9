package httpapi

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/hashicorp/go-bexpr"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/fsm"
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
//	GET /v1/evaluations/count[?prefix=][&filter=] → {"Count", "Index"}: how many evaluations
//	                                         the namespace holds (filter: Nomad's expression
//	                                         language over each evaluation)
//
// All are blocking queries. And the one write, as Nomad's, for a
// management token:
//
//	DELETE /v1/evaluations {"EvalIDs": [...]} or {"Filter": "..."} → {"Count", "Index"}
//
// deletes evaluations while the eval broker is paused (the scheduler
// configuration's PauseEvalBroker; otherwise a 400 "eval broker is
// enabled; eval broker must be paused to delete evals"). By ID, every
// evaluation must exist (404 "eval not found") and be safe to delete (400):
// its job is gone, stopped or dead, or none of its allocations still runs
// or may still be rescheduled from. By filter, the safe evaluations that
// match are deleted, in batches; the others are left.

func init() {
	register(
		route{"GET /v1/evaluations", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).evalsList},
		route{"GET /v1/evaluations/count", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).evalsCount},
		route{"DELETE /v1/evaluations", writeRoute, management, (*Server).evalsDelete},
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

// EvalCountResponse answers GET /v1/evaluations/count, as Nomad's.
type EvalCountResponse struct {
	Count int
	Index uint64
}

func (s *Server) evalsCount(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	filter, err := evalFilter(r.URL.Query().Get("filter"))
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		var evals []*structs.Evaluation
		var err error
		if o.Prefix != "" {
			evals, err = snap.EvalsByIDPrefix(o.Prefix)
		} else {
			evals, err = snap.Evals()
		}
		if err != nil {
			return nil, 0, err
		}
		n := 0
		for _, e := range evals {
			if !o.matchNamespace(e.Namespace) {
				continue
			}
			if ok, err := evalMatches(filter, e); err != nil {
				return nil, 0, err
			} else if ok {
				n++
			}
		}
		idx, err := snap.Index(state.TableEvals)
		return &EvalCountResponse{Count: n, Index: idx}, idx, err
	})
}

// evalFilter parses a filter expression; "" is none (nil).
func evalFilter(expr string) (*bexpr.Evaluator, error) {
	if expr == "" {
		return nil, nil
	}
	f, err := bexpr.CreateEvaluator(expr)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "failed to read filter expression: %v", err)
	}
	return f, nil
}

// evalMatches reports whether e passes filter (nil: every evaluation). An
// expression naming a field an evaluation lacks matches nothing, as
// Nomad's.
func evalMatches(filter *bexpr.Evaluator, e *structs.Evaluation) (bool, error) {
	if filter == nil {
		return true, nil
	}
	ok, err := filter.Evaluate(e)
	if err != nil {
		return false, nil
	}
	return ok, nil
}

// maxEvalDeleteIDs bounds the IDs of one delete, as Nomad's
// MaxUUIDsPerWriteRequest; evalDeleteBatch is how many evaluations one
// entry of a delete by filter holds.
const (
	maxEvalDeleteIDs = 7281
	evalDeleteBatch  = maxEvalDeleteIDs / 10
)

// EvalDeleteResponse answers DELETE /v1/evaluations, as Nomad's.
type EvalDeleteResponse struct {
	Count int
	Index uint64
}

// evalBrokerPaused reports whether the operator paused the eval broker
// (the replicated scheduler configuration's PauseEvalBroker).
func evalBrokerPaused(snap *state.Snapshot) (bool, error) {
	c, err := snap.EffectiveSchedulerConfig()
	return c.PauseEvalBroker, err
}

func (s *Server) evalsDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	var body struct {
		EvalIDs []string
		Filter  string
	}
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	switch {
	case body.Filter != "" && len(body.EvalIDs) > 0:
		return nil, Errorf(http.StatusBadRequest, "evals cannot be deleted by both ID and filter")
	case body.Filter == "" && len(body.EvalIDs) == 0:
		return nil, Errorf(http.StatusBadRequest, "evals must be deleted by either ID or filter")
	case len(body.EvalIDs) > maxEvalDeleteIDs:
		return nil, Errorf(http.StatusBadRequest, "request includes %d evaluation IDs, must be %d or fewer", len(body.EvalIDs), maxEvalDeleteIDs)
	}
	filter, err := evalFilter(body.Filter)
	if err != nil {
		return nil, err
	}
	snap := s.backend.State().Snapshot()
	if paused, err := evalBrokerPaused(snap); err != nil {
		return nil, err
	} else if !paused {
		return nil, Errorf(http.StatusBadRequest, "eval broker is enabled; eval broker must be paused to delete evals")
	}
	var batches [][]string
	if filter == nil {
		for _, id := range body.EvalIDs {
			e, err := snap.EvalByID(id)
			if err != nil {
				return nil, err
			}
			if e == nil {
				return nil, Errorf(http.StatusNotFound, "eval not found")
			}
			if ok, err := evalDeleteSafe(snap, e); err != nil {
				return nil, err
			} else if !ok {
				return nil, Errorf(http.StatusBadRequest, "eval %s is not safe to delete", e.ID)
			}
		}
		batches = [][]string{body.EvalIDs}
	} else {
		evals, err := snap.Evals()
		if err != nil {
			return nil, err
		}
		var batch []string
		for _, e := range evals {
			if ok, err := evalMatches(filter, e); err != nil || !ok {
				continue
			}
			if ok, err := evalDeleteSafe(snap, e); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			if batch = append(batch, e.ID); len(batch) == evalDeleteBatch {
				batches, batch = append(batches, batch), nil
			}
		}
		if len(batch) > 0 {
			batches = append(batches, batch)
		}
	}
	out := &EvalDeleteResponse{}
	for _, ids := range batches {
		_, index, err := s.backend.Apply(r.Context(), fsm.EvalReapRequestType, &structs.EvalReapRequest{Evals: ids})
		if err != nil {
			return nil, fmt.Errorf("deleting evaluations: %w", err)
		}
		out.Count, out.Index = out.Count+len(ids), index
	}
	s.setMeta(w, out.Index)
	return out, nil
}

// evalDeleteSafe reports whether deleting e loses nothing the scheduler
// still needs, as Nomad's: its job is gone, stopped or dead, or none of
// its allocations is running (or unknown) or failed with a reschedule
// still to come from it (a failed allocation's reschedule history is
// carried by its replacement, so one that was replaced under a limited
// policy with attempts made is safe).
func evalDeleteSafe(snap *state.Snapshot, e *structs.Evaluation) (bool, error) {
	job, err := snap.JobByID(e.Namespace, e.JobID)
	if err != nil {
		return false, err
	}
	if job == nil || job.Stop || job.Status == structs.JobStatusDead {
		return true, nil
	}
	allocs, err := snap.AllocsByEval(e.ID)
	if err != nil {
		return false, err
	}
	for _, a := range allocs {
		switch a.ClientStatus {
		case structs.AllocClientStatusRunning, structs.AllocClientStatusUnknown:
			return false, nil
		case structs.AllocClientStatusFailed:
		default:
			continue
		}
		var p *structs.ReschedulePolicy
		if tg := job.LookupTaskGroup(a.TaskGroup); tg != nil {
			p = tg.ReschedulePolicy
		}
		if p == nil || (!p.Unlimited && p.Attempts == 0) {
			continue
		}
		if a.NextAllocation == "" || p.Unlimited || a.RescheduleTracker == nil || len(a.RescheduleTracker.Events) == 0 {
			return false, nil
		}
	}
	return true, nil
}
