package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/hashicorp/go-bexpr"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Nomad's node pool endpoints. The pools are stored (state_nodepools.go);
// "all" and "default" always exist and cannot be changed or deleted.
//
//	GET          /v1/node/pools              → []*structs.NodePool, by name (?prefix=, ?filter=, ?per_page=, ?next_token=)
//	GET          /v1/node/pool/{name}        → *structs.NodePool, or 404 "node pool not found"
//	PUT|POST     /v1/node/pools              → creates or replaces the pool of the body
//	PUT|POST     /v1/node/pool/{name}        → the same; the body's Name must be {name}
//	DELETE       /v1/node/pool/{name}        → deletes it; refused while nodes or jobs that are not dead use it
//	GET          /v1/node/pool/{name}/nodes  → []*structs.NodeListStub (?filter=, ?per_page=, ?next_token=)
//	GET          /v1/node/pool/{name}/jobs   → []*structs.JobListStub (?namespace=, "*" for all; ?filter=, paged)
//
// ?filter= is Nomad's filter expression (go-bexpr) over the list's objects,
// applied before the page is cut, as Nomad's paginator does.
//
// /v1/node/pool/{name} would overlap /v1/node/{id}/… in the router:
// routePath sends it to /v1/node-pool/{name}.
//
// ACLs, as Nomad's node_pool rules: the list shows the pools the token
// may read; a read needs node_pool read on the pool (and node:read for its
// nodes; its jobs are those of the namespaces where the token may list
// jobs); an apply needs write and a delete needs delete on the pool.

func init() {
	register(
		route{"GET /v1/node/pools", readRoute, anyCaller, (*Server).nodePoolsList},
		route{"GET /v1/node-pool/{name}", readRoute, nodePoolCap(acl.NodePoolCapabilityRead), (*Server).nodePoolInfo},
		route{"GET /v1/node/pool/{name}/nodes", readRoute, nodePoolCap(acl.NodePoolCapabilityRead), (*Server).nodePoolNodes},
		route{"GET /v1/node/pool/{name}/jobs", readRoute, nodePoolCap(acl.NodePoolCapabilityRead), (*Server).nodePoolJobs},
		route{"DELETE /v1/node-pool/{name}", writeRoute, nodePoolCap(acl.NodePoolCapabilityDelete), (*Server).nodePoolDelete},
	)
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/node/pools", writeRoute, nodePoolCap(acl.NodePoolCapabilityWrite), (*Server).nodePoolApply},
			route{m + " /v1/node-pool/{name}", writeRoute, nodePoolCap(acl.NodePoolCapabilityWrite), (*Server).nodePoolApply},
		)
	}
}

// nodePoolCap needs a node_pool capability on the pool the path names;
// a route whose pool is in the body checks it in the handler
// (checkNodePool).
func nodePoolCap(capability string) need { return need{kind: needNodePool, capability: capability} }

// allowsNodePool answers a needNodePool check: the capability on the pool
// the path names, or, without one, true (the handler checks the body's).
func allowsNodePool(a *acl.ACL, n need, r *http.Request) bool {
	name := r.PathValue("name")
	return name == "" || a.AllowNodePoolOp(name, n.capability)
}

// checkNodePool checks, for a handler, the route's node_pool capability on
// the pool the request body names.
func checkNodePool(r *http.Request, pool string) error {
	z := authzOf(r)
	if !z.enabled || z.need.kind != needNodePool || z.acl.AllowNodePoolOp(pool, z.need.capability) {
		return nil
	}
	return Errorf(http.StatusForbidden, "%s: needs node_pool %s on %q: %w", ErrPermissionDenied, z.need.capability, pool, ErrPermissionDenied)
}

// nodePoolReadable returns, for the list, whether the caller may read the
// pool; nil when every pool may be read.
func nodePoolReadable(r *http.Request) func(string) bool {
	z := authzOf(r)
	if !z.enabled || z.acl.IsManagement() {
		return nil
	}
	return func(pool string) bool { return z.acl.AllowNodePoolOp(pool, acl.NodePoolCapabilityRead) }
}

func (s *Server) nodePoolsList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	readable := nodePoolReadable(r)
	filter, err := nodePoolListFilter(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		pools, err := snap.NodePoolsByPrefix(o.Prefix)
		if err != nil {
			return nil, 0, err
		}
		out := pools[:0]
		for _, p := range pools {
			if (readable == nil || readable(p.Name)) && filter.matches(p) {
				out = append(out, p)
			}
		}
		out = paginate(w, o, out, func(p *structs.NodePool) string { return p.Name })
		idx, err := snap.Index(state.TableNodePools)
		return out, max(1, idx), err
	})
}

func (s *Server) nodePoolInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		p, err := snap.NodePoolByName(name)
		if err != nil {
			return nil, 0, err
		}
		if p == nil {
			idx, err := snap.Index(state.TableNodePools)
			if err != nil {
				return nil, 0, err
			}
			return nil, max(1, idx), Errorf(http.StatusNotFound, "node pool not found")
		}
		return p, p.ModifyIndex, nil
	})
}

// decodeNodePool reads the body of an apply: one pool, Nomad's JSON.
func decodeNodePool(r *http.Request) (*structs.NodePool, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, Errorf(http.StatusRequestEntityTooLarge, "request body too large: %w", err)
		}
		return nil, Errorf(http.StatusBadRequest, "reading request body: %w", err)
	}
	if strings.TrimSpace(string(body)) == "" || strings.TrimSpace(string(body)) == "null" {
		return nil, Errorf(http.StatusBadRequest, "missing node pool")
	}
	var p structs.NodePool
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, Errorf(http.StatusBadRequest, "invalid node pool: %v", err)
	}
	return &p, nil
}

func (s *Server) nodePoolApply(w http.ResponseWriter, r *http.Request) (any, error) {
	p, err := decodeNodePool(r)
	if err != nil {
		return nil, err
	}
	if name := r.PathValue("name"); name != "" && p.Name != name {
		return nil, Errorf(http.StatusBadRequest, "Node pool name does not match request path")
	}
	if p.Name == "" {
		return nil, Errorf(http.StatusBadRequest, "missing node pool name")
	}
	if err := checkNodePool(r, p.Name); err != nil {
		return nil, err
	}
	p.Canonicalize()
	if err := p.Validate(); err != nil {
		return nil, Errorf(http.StatusBadRequest, "invalid node pool %q: %v", p.Name, err)
	}
	if structs.IsBuiltInNodePool(p.Name) {
		return nil, Errorf(http.StatusBadRequest, "modifying node pool %q is not allowed", p.Name)
	}
	_, index, err := s.backend.Apply(r.Context(), fsm.NodePoolUpsertRequestType,
		&structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{p}})
	if err != nil {
		return nil, nodePoolWriteError(err)
	}
	s.setMeta(w, index)
	return nil, nil
}

func (s *Server) nodePoolDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	name := r.PathValue("name")
	if structs.IsBuiltInNodePool(name) {
		return nil, Errorf(http.StatusBadRequest, "deleting node pool %q is not allowed", name)
	}
	snap := s.backend.State().Snapshot()
	p, err := snap.NodePoolByName(name)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, Errorf(http.StatusNotFound, "node pool %s not found", name)
	}
	region := s.poolRegion()
	if err := snap.NodePoolInUse(name, region); err != nil {
		return nil, Errorf(http.StatusBadRequest, "%s", err.Error())
	}
	_, index, err := s.backend.Apply(r.Context(), fsm.NodePoolDeleteRequestType,
		&structs.NodePoolDeleteRequest{Names: []string{name}, Region: region})
	if err != nil {
		return nil, nodePoolWriteError(err)
	}
	s.setMeta(w, index)
	return nil, nil
}

// nodePoolWriteError answers the store's refusal of a pool write that
// raced with another write: a pool that came into use is a 400.
func nodePoolWriteError(err error) error {
	if errors.Is(err, state.ErrConflict) || errors.Is(err, state.ErrInvalid) {
		return Errorf(http.StatusBadRequest, "%s", strings.TrimSuffix(strings.TrimSuffix(err.Error(), ": "+state.ErrConflict.Error()), ": "+state.ErrInvalid.Error()))
	}
	return err
}

// poolRegion returns the cluster's region, which a refused delete names.
func (s *Server) poolRegion() string {
	if self := s.backend.Self(); self != nil && self.Config.Region != "" {
		return self.Config.Region
	}
	return structs.DefaultRegion
}

// checkJobNodePool refuses a job whose pool does not exist, in Nomad's
// words (its job register hook).
func (s *Server) checkJobNodePool(job *structs.Job) error {
	pool := state.NodePoolOfJob(job)
	p, err := s.backend.State().Snapshot().NodePoolByName(pool)
	if err != nil {
		return err
	}
	if p == nil {
		return Errorf(http.StatusBadRequest, "job %q is in nonexistent node pool %q", job.ID, pool)
	}
	return nil
}

func (s *Server) nodePoolNodes(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	if o.Prefix != "" {
		return nil, Errorf(http.StatusBadRequest, "prefix argument not allowed")
	}
	if z := authzOf(r); z.enabled && !z.acl.AllowNodeRead() {
		return nil, Errorf(http.StatusForbidden, "%s: the nodes of a node pool need node:read: %w", ErrPermissionDenied, ErrPermissionDenied)
	}
	name := r.PathValue("name")
	filter, err := nodePoolListFilter(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.Index(state.TableNodes)
		if err != nil {
			return nil, 0, err
		}
		out := []*structs.NodeListStub{}
		if p, err := snap.NodePoolByName(name); err != nil || p == nil {
			return out, max(1, idx), err
		}
		nodes, err := snap.NodesInPool(name)
		if err != nil {
			return nil, 0, err
		}
		for _, n := range nodes {
			if stub := n.Stub(); filter.matches(stub) {
				out = append(out, stub)
			}
		}
		out = paginate(w, o, out, func(n *structs.NodeListStub) string { return n.ID })
		return out, max(1, idx), nil
	})
}

func (s *Server) nodePoolJobs(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	if o.Prefix != "" {
		return nil, Errorf(http.StatusBadRequest, "prefix argument not allowed")
	}
	name := r.PathValue("name")
	// The jobs shown are those of the namespaces where the caller may
	// list jobs, as Nomad's.
	listable := func(string) bool { return true }
	if z := authzOf(r); z.enabled && !z.acl.IsManagement() {
		listable = func(ns string) bool { return z.acl.AllowNamespaceOp(ns, acl.NamespaceCapabilityListJobs) }
	}
	filter, err := nodePoolListFilter(r)
	if err != nil {
		return nil, err
	}
	list := jobsListQuery(o)
	return s.blockingRead(w, r, o, func(ws memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		v, idx, err := list(ws, snap)
		if err != nil {
			return nil, idx, err
		}
		out := []*structs.JobListStub{}
		if p, err := snap.NodePoolByName(name); err != nil || p == nil {
			return out, idx, err
		}
		stubs, _ := v.([]*structs.JobListStub)
		for _, j := range stubs {
			pool := j.NodePool
			if pool == "" {
				pool = structs.NodePoolDefault
			}
			if pool == name && listable(j.Namespace) && filter.matches(j) {
				out = append(out, j)
			}
		}
		out = paginate(w, o, out, func(j *structs.JobListStub) string { return j.Namespace + "." + j.ID })
		return out, idx, nil
	})
}

// nodePoolFilter is a list's ?filter= expression; nil keeps everything.
type nodePoolFilter struct{ e *bexpr.Evaluator }

// nodePoolListFilter reads ?filter=; a malformed expression is a 400 in
// Nomad's words.
func nodePoolListFilter(r *http.Request) (*nodePoolFilter, error) {
	expr := r.URL.Query().Get("filter")
	if expr == "" {
		return nil, nil
	}
	e, err := bexpr.CreateEvaluator(expr)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "failed to read filter expression: %v", err)
	}
	return &nodePoolFilter{e}, nil
}

// matches reports whether obj passes the filter; an expression naming a
// field the object lacks matches nothing.
func (f *nodePoolFilter) matches(obj any) bool {
	if f == nil {
		return true
	}
	ok, err := f.e.Evaluate(obj)
	return err == nil && ok
}
