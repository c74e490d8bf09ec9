package httpapi

import (
	"net/http"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The allocation reads, as Nomad's:
//
//	GET /v1/allocations[?prefix=ab12][&resources=true] → []*structs.AllocationListStub
//	                                     (with resources, each with its AllocatedResources)
//	GET /v1/allocation/{id}            → *structs.Allocation (with its Job); 404 if unknown
//
// Both are blocking queries on the allocs table.

func init() {
	register(
		route{"GET /v1/allocations", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).allocsList},
		route{"GET /v1/allocation/{id}", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).allocInfo},
	)
}

func (s *Server) allocsList(w http.ResponseWriter, r *http.Request) (any, error) {
	// ?resources=true adds each allocation's AllocatedResources, as
	// Nomad's.
	resources, err := queryBool(r, "resources")
	if err != nil {
		return nil, err
	}
	return listRead(s, w, r, listing[*structs.Allocation]{
		table:     state.TableAllocs,
		all:       (*state.Snapshot).Allocs,
		byPrefix:  (*state.Snapshot).AllocsByIDPrefix,
		namespace: func(a *structs.Allocation) string { return a.Namespace },
		key:       func(a *structs.Allocation) string { return a.ID },
		answer: func(kept []*structs.Allocation) any {
			out := allocStubs(kept)
			if resources {
				byID := make(map[string]*structs.Allocation, len(kept))
				for _, a := range kept {
					byID[a.ID] = a
				}
				for _, st := range out {
					st.AllocatedResources = byID[st.ID].AllocatedResources.Copy()
				}
			}
			return out
		},
	})
}

func (s *Server) allocInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		a, err := snap.AllocByID(id)
		if err != nil {
			return nil, 0, err
		}
		if a == nil {
			idx, err := snap.Index(state.TableAllocs)
			if err != nil {
				return nil, 0, err
			}
			return nil, idx, Errorf(http.StatusNotFound, "alloc not found: %s", id)
		}
		if err := checkNamespace(r, a.Namespace); err != nil {
			return nil, a.ModifyIndex, err
		}
		// The alloc's own index, so that a watcher of one alloc wakes
		// only when it changes.
		return viewAlloc(a), a.ModifyIndex, nil
	})
}
