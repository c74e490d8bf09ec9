package httpapi

import (
	"net/http"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Nomad's node pool endpoints, over drover's two node pools: "default",
// which every node is in, and "all", which stands for every node. Drover
// stores no other pool yet, so applying or deleting one is a 400 saying so
// (Nomad refuses to change the two built-in pools as well).
//
//	GET          /v1/node/pools              → []*NodePool (?prefix=)
//	GET          /v1/node/pool/{name}        → *NodePool, or 404 "node pool not found"
//	GET          /v1/node/pool/{name}/nodes  → []*structs.NodeListStub
//	GET          /v1/node/pool/{name}/jobs   → []*structs.JobListStub (?namespace=, "*" for all)
//	PUT|POST     /v1/node/pools              → 400
//	DELETE       /v1/node/pool/{name}        → 400
//
// GET /v1/node/pool/{name} would overlap GET /v1/node/{id}/allocations in
// the router: routePath sends it to /v1/node-pool/{name}.

func init() {
	register(
		route{"GET /v1/node/pools", readRoute, anyCaller, (*Server).nodePoolsList},
		route{"GET /v1/node-pool/{name}", readRoute, anyCaller, (*Server).nodePoolInfo},
		route{"GET /v1/node/pool/{name}/nodes", readRoute, nodeRead, (*Server).nodePoolNodes},
		route{"GET /v1/node/pool/{name}/jobs", readRoute, nsCap(acl.NamespaceCapabilityListJobs), (*Server).nodePoolJobs},
		route{"DELETE /v1/node/pool/{name}", writeRoute, management, (*Server).nodePoolWrite},
	)
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/node/pools", writeRoute, management, (*Server).nodePoolWrite})
	}
}

// nodePoolAll is Nomad's built-in pool of every node.
const nodePoolAll = "all"

// NodePool is Nomad's node pool object (api.NodePool).
type NodePool struct {
	Name                   string
	Description            string
	Meta                   map[string]string
	SchedulerConfiguration any
	CreateIndex            uint64
	ModifyIndex            uint64
}

// nodePools are drover's pools, by name, with Nomad's descriptions.
var nodePools = []*NodePool{
	{Name: nodePoolAll, Description: "Node pool with all nodes in the cluster.", CreateIndex: 1, ModifyIndex: 1},
	{Name: structs.DefaultNodePool, Description: "Default node pool.", CreateIndex: 1, ModifyIndex: 1},
}

func nodePoolByName(name string) *NodePool {
	for _, p := range nodePools {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func (s *Server) nodePoolsList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, 1)
	out := []*NodePool{}
	for _, p := range nodePools {
		if strings.HasPrefix(p.Name, o.Prefix) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (s *Server) nodePoolInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	s.setMeta(w, 1)
	if p := nodePoolByName(r.PathValue("name")); p != nil {
		return p, nil
	}
	return nil, Errorf(http.StatusNotFound, "node pool not found")
}

func (s *Server) nodePoolNodes(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	if nodePoolByName(name) == nil {
		return nil, Errorf(http.StatusNotFound, "node pool %q not found", name)
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		nodes, err := snap.Nodes()
		if err != nil {
			return nil, 0, err
		}
		out := make([]*structs.NodeListStub, 0, len(nodes))
		for _, n := range nodes {
			if name == nodePoolAll || n.NodePool == name || n.NodePool == "" && name == structs.DefaultNodePool {
				out = append(out, n.Stub())
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		idx, err := snap.Index(state.TableNodes)
		return out, idx, err
	})
}

func (s *Server) nodePoolJobs(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	if nodePoolByName(name) == nil {
		return nil, Errorf(http.StatusNotFound, "node pool %q not found", name)
	}
	list := jobsListQuery(o)
	return s.blockingRead(w, r, o, func(ws memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		v, idx, err := list(ws, snap)
		if err != nil {
			return nil, idx, err
		}
		stubs, _ := v.([]*structs.JobListStub)
		out := []*structs.JobListStub{}
		for _, j := range stubs {
			if name == nodePoolAll || j.NodePool == name || j.NodePool == "" && name == structs.DefaultNodePool {
				out = append(out, j)
			}
		}
		return out, idx, nil
	})
}

func (s *Server) nodePoolWrite(_ http.ResponseWriter, r *http.Request) (any, error) {
	if name := r.PathValue("name"); name == nodePoolAll || name == structs.DefaultNodePool {
		return nil, Errorf(http.StatusBadRequest, "modifying node pool %q is not allowed", name)
	}
	return nil, Errorf(http.StatusBadRequest,
		`drover has the node pools "default" (every node) and "all" only: creating, changing or deleting a node pool is not supported by drover yet`)
}
