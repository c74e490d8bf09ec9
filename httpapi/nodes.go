package httpapi

import (
	"net/http"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The node reads, as Nomad's:
//
//	GET /v1/nodes[?prefix=ab12]  → []*structs.NodeListStub
//	GET /v1/node/{id}            → *structs.Node; 404 if unknown
//
// Both are blocking queries on the nodes table. (A node's allocations,
// GET /v1/node/{id}/allocations, are served with the client endpoints.)

func init() {
	register(
		route{"GET /v1/nodes", readRoute, nodeRead, (*Server).nodesList},
		route{"GET /v1/node/{id}", readRoute, nodeRead, (*Server).nodeInfo},
	)
}

func (s *Server) nodesList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	// ?resources=true adds each node's resources, as Nomad's.
	resources, err := queryBool(r, "resources")
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		var nodes []*structs.Node
		var err error
		if o.Prefix != "" {
			nodes, err = snap.NodesByIDPrefix(o.Prefix)
		} else {
			nodes, err = snap.Nodes()
		}
		if err != nil {
			return nil, 0, err
		}
		out := make([]*structs.NodeListStub, 0, len(nodes))
		for _, n := range nodes {
			if resources {
				out = append(out, n.StubWithResources())
			} else {
				out = append(out, n.Stub())
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		idx, err := snap.Index(state.TableNodes)
		return out, idx, err
	})
}

func (s *Server) nodeInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		n, err := snap.NodeByID(id)
		if err != nil {
			return nil, 0, err
		}
		if n == nil {
			idx, err := snap.Index(state.TableNodes)
			if err != nil {
				return nil, 0, err
			}
			return nil, idx, Errorf(http.StatusNotFound, "node not found: %s", id)
		}
		return n, n.ModifyIndex, nil
	})
}
