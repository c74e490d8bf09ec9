package httpapi

import (
	"context"
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
//
// And the node writes, as Nomad's (both need node:write; an unknown node
// is a 404 "node not found"):
//
//	PUT|POST /v1/node/{id}/evaluate → {"EvalIDs", "EvalCreateIndex", "NodeModifyIndex"}:
//	    node-update evaluations for the jobs with allocations on the node and the
//	    system jobs (none, and index 0, when there are neither)
//	PUT|POST /v1/node/{id}/purge    → the same: removes the node from the state, then
//	    evaluates the jobs that had allocations on it (they are lost) and the system jobs

func init() {
	register(
		route{"GET /v1/nodes", readRoute, nodeRead, (*Server).nodesList},
		route{"GET /v1/node/{id}", readRoute, nodeRead, (*Server).nodeInfo},
	)
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/node/{id}/evaluate", writeRoute, nodeWrite, (*Server).nodeEvaluate},
			route{m + " /v1/node/{id}/purge", writeRoute, nodeWrite, (*Server).nodePurge},
		)
	}
}

// NodeOpsBackend is how a server evaluates and purges nodes
// (server.Leader's EvaluateNode and PurgeNode): an unknown node is a 404.
type NodeOpsBackend interface {
	EvaluateNode(ctx context.Context, nodeID string) (*NodeUpdateResponse, error)
	PurgeNode(ctx context.Context, nodeID string) (*NodeUpdateResponse, error)
}

func (s *Server) nodeOp(w http.ResponseWriter, r *http.Request, op func(NodeOpsBackend, context.Context, string) (*NodeUpdateResponse, error)) (any, error) {
	nb, ok := s.backend.(NodeOpsBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: node operations unavailable")
	}
	id := r.PathValue("id")
	n, err := s.backend.State().Snapshot().NodeByID(id)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, Errorf(http.StatusNotFound, "node not found: %s", id)
	}
	out, err := op(nb, r.Context(), id)
	if err != nil {
		return nil, err
	}
	if out.EvalIDs == nil {
		out.EvalIDs = []string{}
	}
	s.setMeta(w, max(out.NodeModifyIndex, out.EvalCreateIndex))
	return out, nil
}

func (s *Server) nodeEvaluate(w http.ResponseWriter, r *http.Request) (any, error) {
	out, err := s.nodeOp(w, r, NodeOpsBackend.EvaluateNode)
	if err == nil {
		// As Nomad's: the index is the evaluations' (0 for none).
		s.setMeta(w, out.(*NodeUpdateResponse).EvalCreateIndex)
	}
	return out, err
}

func (s *Server) nodePurge(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.nodeOp(w, r, NodeOpsBackend.PurgeNode)
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
