package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sort"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The client endpoints: how a client agent registers its node, proves it
// is alive, learns its allocations and reports on them. Nomad's clients
// speak RPC to the servers; drover's speak HTTP:
//
//	PUT /v1/internal/node/register        body structs.NodeRegisterRequest
//	    → NodeRegisterResponse {"HeartbeatTTL": ns, "Index": n}
//	PUT /v1/internal/node/{id}/heartbeat  no body
//	    → NodeHeartbeatResponse {"HeartbeatTTL": ns}; 404 for a node the
//	      servers do not know (the client then registers again)
//	GET /v1/node/{id}/allocations?index=&wait=   (Nomad's public path)
//	    → []*structs.Allocation, each with its Job: a blocking query whose
//	      X-Nomad-Index is the highest AllocModifyIndex among the node's
//	      allocs (changes by the servers, not the client's own reports)
//	GET /v1/internal/node/{id}/allocs-index?index=&wait=
//	    → NodeAllocsIndexResponse {"Allocs": {allocID: AllocModifyIndex},
//	      "Index": n}: the same blocking query without the allocations, so
//	      that a client learns which allocs changed and fetches only those;
//	      an unknown node has an empty map
//	PUT /v1/internal/allocs/get?index=&wait=  body AllocsGetRequest
//	    {"AllocIDs": [...], "HeldJobs": [JobRef...]} → AllocsGetResponse
//	      {"Allocs": [...], each with its Job, "FromHeld": {allocID: i},
//	      "Index": n}; IDs unknown to state are left out. An alloc whose
//	      job is one the client holds (HeldJobs[i]) comes without it
//	      ("Job": null) and is listed in FromHeld. With index, it blocks
//	      until one of the allocs is past it, so that a stale server does
//	      not answer from before the index map it gave
//	PUT /v1/internal/allocs/update        body AllocUpdateRequest
//	    {"Allocs": [{ID, ClientStatus, ClientDescription, TaskStates,
//	      DeploymentStatus}]} → {"Index": n}; the body is JSON, or
//	      MessagePack with Content-Type wire.ContentType (what clients
//	      send: two fifths of the bytes, decoded in under a quarter of the time)
//
//	PUT /v1/internal/node/{id}/allocs-sync?index=&wait=  body AllocsSyncRequest
//	    {"Since": n, "HeldJobs": [JobRef...], "Known": digest} →
//	      AllocsSyncResponse {"Allocs": {allocID: AllocModifyIndex},
//	      "KnownCurrent": bool, "Changed": [...], "FromHeld": {allocID: i},
//	      "Index": n}: the allocs-index query
//	      and the fetch of what changed in one round trip. Changed holds,
//	      sorted by ID, the node's allocs whose index is past Since, in the
//	      client's form (clientView: without the task states the client
//	      reported, the placement metrics or the servers' state changes),
//	      each without its job when the client holds that job version
//	      (FromHeld, as allocs/get). What the client needs and Changed
//	      left out (an alloc at or below Since that it never applied) it
//	      fetches with allocs/get. Allocs is left out (KnownCurrent) when
//	      Known is the digest of the node's allocs at or below Since: the
//	      client has them. A server without this route answers 404 and the
//	      client uses allocs-index and allocs/get
//
// The allocs-index, allocs-sync and allocs/get answers come in MessagePack
// (Content-Type wire.ContentType; application/msgpack is read as the same)
// when the request's Accept header names that type, as the clients' do;
// JSON otherwise. A request body in MessagePack (allocs-sync and
// allocs/update; allocs/get takes JSON) says so with its Content-Type.
//
// Writes go to the leader (followers forward them); the allocations read
// goes to the leader too, or is answered from the local copy with ?stale,
// which is what clients use.

func init() {
	register(
		route{"PUT /v1/internal/node/register", writeRoute, nodeRegister, (*Server).nodeRegister},
		route{"PUT /v1/internal/node/{id}/heartbeat", writeRoute, nodeSelf, (*Server).nodeHeartbeat},
		route{"GET /v1/node/{id}/allocations", readRoute, nodeReadOrSelf, (*Server).nodeAllocations},
		route{"GET /v1/internal/node/{id}/allocs-index", readRoute, nodeSelf, (*Server).nodeAllocsIndex},
		route{"PUT /v1/internal/allocs/get", readRoute, nodeAny, (*Server).allocsGet},
		route{"PUT /v1/internal/node/{id}/allocs-sync", readRoute, nodeSelf, (*Server).nodeAllocsSync},
		route{"PUT /v1/internal/allocs/update", writeRoute, nodeAny, (*Server).allocsUpdate},
	)
}

// ClientBackend is what the client endpoints need beyond Backend: the
// leader's services for client writes. A Backend that does not implement
// it answers these endpoints with 501 "not a server".
type ClientBackend interface {
	// RegisterNode registers (or re-registers) a node and returns the TTL
	// within which it must heartbeat and the index of the write.
	RegisterNode(ctx context.Context, node *structs.Node) (ttl time.Duration, index uint64, err error)
	// NodeHeartbeat resets the node's heartbeat timer and returns its TTL;
	// an error wrapping ErrUnknownNode (or state.ErrNotFound) for a node
	// the servers do not know.
	NodeHeartbeat(ctx context.Context, nodeID string) (time.Duration, error)
	// UpdateAllocsFromClient writes what a client reports of its allocs
	// and returns the index of the write.
	UpdateAllocsFromClient(ctx context.Context, allocs []*structs.Allocation) (uint64, error)
}

// ErrUnknownNode: a heartbeat names a node the servers do not know. A
// ClientBackend wraps it; the API answers 404.
var ErrUnknownNode = errors.New("node not found")

// NodeRegisterResponse answers PUT /v1/internal/node/register.
type NodeRegisterResponse struct {
	HeartbeatTTL time.Duration
	Index        uint64
}

// NodeHeartbeatResponse answers PUT /v1/internal/node/{id}/heartbeat.
type NodeHeartbeatResponse struct {
	HeartbeatTTL time.Duration
}

// NodeAllocsIndexResponse answers GET /v1/internal/node/{id}/allocs-index.
type NodeAllocsIndexResponse struct {
	// Allocs maps each of the node's allocs to its AllocModifyIndex.
	Allocs map[string]uint64
	Index  uint64
}

// AllocsGetRequest is the body of PUT /v1/internal/allocs/get.
type AllocsGetRequest struct {
	AllocIDs []string
	// HeldJobs are the job versions the client already holds. An alloc
	// of one of them is sent without its job, which is most of an
	// alloc's size: the client has it from an alloc it runs.
	HeldJobs []structs.JobRef `json:",omitempty"`
}

// AllocsGetResponse answers PUT /v1/internal/allocs/get.
type AllocsGetResponse struct {
	Allocs []*structs.Allocation
	// FromHeld maps the ID of each alloc sent without its job to the
	// position of that job in the request's HeldJobs.
	FromHeld map[string]int `json:",omitempty"`
	Index    uint64
}

// AllocsSyncRequest is the body of PUT /v1/internal/node/{id}/allocs-sync.
type AllocsSyncRequest struct {
	// Since is the index of the last answer the client applied: the
	// allocs the servers changed after it come in the answer.
	Since uint64
	// HeldJobs are the job versions the client holds (as in
	// AllocsGetRequest).
	HeldJobs []structs.JobRef `json:",omitempty"`
	// Known, when not 0, is the digest (structs.AllocsDigest) of the
	// allocs the client holds at or below Since, each with the index it
	// applied. When the node's allocs at or below Since make the same
	// digest, the answer leaves Allocs out (KnownCurrent): nothing the
	// client holds went away or changed, and Changed is all it needs.
	Known structs.AllocsDigest `json:",omitempty"`
}

// AllocsSyncResponse answers PUT /v1/internal/node/{id}/allocs-sync.
type AllocsSyncResponse struct {
	// Allocs maps each of the node's allocs to its AllocModifyIndex, as
	// NodeAllocsIndexResponse; null with KnownCurrent.
	Allocs map[string]uint64
	// KnownCurrent: the client holds what the servers held at Since (the
	// request's Known is the digest of the node's allocs at or below
	// Since, or of those this server's last answer to the node gave, with
	// none gone from the node since), and Allocs is left out. The node's
	// allocs are then those the client holds at or below Since, each
	// replaced by its copy in Changed if there is one, and the rest of
	// Changed.
	KnownCurrent bool `json:",omitempty"`
	// Changed are the allocs whose index is past the request's Since,
	// sorted by ID, in their client's form (see clientView).
	Changed []*structs.Allocation
	// FromHeld maps the ID of each alloc of Changed sent without its job
	// to the position of that job in the request's HeldJobs.
	FromHeld map[string]int `json:",omitempty"`
	Index    uint64

	// nodeDigest is the digest of all the node's allocs in the state
	// answered from (0: not known), which the server remembers
	// (syncMarks); not sent.
	nodeDigest structs.AllocsDigest
}

// AllocUpdateRequest is the body of PUT /v1/internal/allocs/update, in
// JSON or in MessagePack (package wire).
type AllocUpdateRequest struct {
	Allocs []*structs.Allocation
}

// AllocUpdateResponse answers PUT /v1/internal/allocs/update.
type AllocUpdateResponse struct {
	Index uint64
}

// clientBackend returns the backend's client services, or a 501.
func (s *Server) clientBackend() (ClientBackend, error) {
	cb, ok := s.backend.(ClientBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: client endpoints unavailable")
	}
	return cb, nil
}

func (s *Server) nodeRegister(w http.ResponseWriter, r *http.Request) (any, error) {
	cb, err := s.clientBackend()
	if err != nil {
		return nil, err
	}
	var req structs.NodeRegisterRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	n := req.Node
	switch {
	case n == nil:
		return nil, Errorf(http.StatusBadRequest, "missing node")
	case n.ID == "":
		return nil, Errorf(http.StatusBadRequest, "missing node ID")
	case n.Datacenter == "":
		return nil, Errorf(http.StatusBadRequest, "missing datacenter")
	case n.Name == "":
		return nil, Errorf(http.StatusBadRequest, "missing node name")
	}
	switch n.Status {
	case "", structs.NodeStatusInit, structs.NodeStatusReady:
	default:
		return nil, Errorf(http.StatusBadRequest, "invalid status %q for a registering node", n.Status)
	}
	// The node's secret comes in the token header, never in the body;
	// the servers keep its hash (a SecretID in the body is dropped).
	n.SecretHash, n.SecretID = "", ""
	if secret := TokenFromRequest(r); secret != "" {
		n.SecretHash = structs.HashSecret(secret)
	}
	if s.aclConfig.Enabled {
		if n.SecretHash == "" {
			return nil, Errorf(http.StatusForbidden, "%s: a node registers with its node secret (%s): %w", ErrPermissionDenied, TokenHeader, ErrPermissionDenied)
		}
		old, err := s.backend.State().Snapshot().NodeByID(n.ID)
		if err != nil {
			return nil, err
		}
		if old != nil && old.SecretHash != "" && !structs.SecretMatches(TokenFromRequest(r), old.SecretHash) {
			return nil, Errorf(http.StatusForbidden, "%s: node %s is registered with another node secret: %w", ErrPermissionDenied, n.ID, ErrPermissionDenied)
		}
	}
	// Client introduction (node_identity.go).
	if err := s.checkIntroduction(r, n); err != nil {
		return nil, err
	}
	ttl, index, err := cb.RegisterNode(r.Context(), n)
	if errors.Is(err, state.ErrConflict) {
		return nil, Errorf(http.StatusForbidden, "%s: node %s: its node secret is another node's: %w", ErrPermissionDenied, n.ID, ErrPermissionDenied)
	}
	if err != nil {
		return nil, err
	}
	s.setMeta(w, index)
	return &NodeRegisterResponse{HeartbeatTTL: ttl, Index: index}, nil
}

func (s *Server) nodeHeartbeat(_ http.ResponseWriter, r *http.Request) (any, error) {
	cb, err := s.clientBackend()
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	n, err := s.backend.State().Snapshot().NodeByID(id)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, Errorf(http.StatusNotFound, "node %q not found: %w", id, ErrUnknownNode)
	}
	ttl, err := cb.NodeHeartbeat(r.Context(), id)
	if errors.Is(err, ErrUnknownNode) {
		return nil, Errorf(http.StatusNotFound, "node %q not found: %w", id, err)
	}
	if err != nil {
		return nil, err
	}
	return &NodeHeartbeatResponse{HeartbeatTTL: ttl}, nil
}

// nodeAllocations answers the node's allocations, each with its job and
// Nomad's legacy Resources (see allocView). The
// index is the highest AllocModifyIndex among them — the last change the
// servers made (placement, in-place update, stop), not the client's own
// reports — or the allocs table's index when the node has none. So a
// client is woken only by what it must act on, and never by its own
// writes echoing back.
func (s *Server) nodeAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	// A token with node:read sees the allocations of the namespaces it
	// may read-job in; the node itself sees all of its own.
	var keep func(string) bool
	if authzOf(r).node == nil {
		keep = namespaceFilter(r)
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		allocs, idx, err := nodeAllocs(snap, id)
		if err != nil {
			return nil, 0, err
		}
		// The index is that of the latest change to any of them, the
		// client's reports included, as Nomad's Node.GetAllocs: a drain
		// monitor (nomad node drain, drover node drain) waits on it for
		// allocations to stop. (Clients follow allocs-index instead.)
		for _, a := range allocs {
			idx = max(idx, a.ModifyIndex)
		}
		if keep != nil {
			kept := allocs[:0:0]
			for _, a := range allocs {
				if keep(a.Namespace) {
					kept = append(kept, a)
				}
			}
			allocs = kept
		}
		return viewAllocs(allocs), idx, nil
	})
}

// nodeAllocsIndex answers which allocations the node has and the index
// of each, at the index nodeAllocations would answer.
func (s *Server) nodeAllocsIndex(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	watch := nodeAllocsWatch{id: r.PathValue("id")}
	var last *NodeAllocsIndexResponse
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		allocs, idx, unchanged, err := watch.read(snap)
		if err != nil {
			return nil, 0, err
		}
		if unchanged {
			return last, last.Index, nil
		}
		out := &NodeAllocsIndexResponse{Allocs: make(map[string]uint64, len(allocs)), Index: idx}
		for _, a := range allocs {
			out.Allocs[a.ID] = allocIndex(a)
		}
		last = out
		return out, idx, nil
	})
}

// nodeAllocsWatch reads a node's allocations for its client's blocking
// query. The query watches the node's entry of the servers' changes (see
// state.Snapshot.NodeAllocsIndex), not its allocations, so that the node's
// own reports do not wake it: the answer only changes with the servers'
// changes. It reads the allocations (unwatched) when that entry moved
// since its last read.
type nodeAllocsWatch struct {
	id        string
	read1     bool
	lastEntry uint64
}

// read returns the node's allocations and the answer's index, or
// unchanged when the node's entry has not moved since the last read (whose
// answer then stands).
func (w *nodeAllocsWatch) read(snap *state.Snapshot) (allocs []*structs.Allocation, idx uint64, unchanged bool, err error) {
	entry, err := snap.NodeAllocsIndex(w.id)
	if err != nil {
		return nil, 0, false, err
	}
	if w.read1 && entry != 0 && entry == w.lastEntry {
		return nil, 0, true, nil
	}
	read := snap
	if entry != 0 {
		read = snap.WithWatch(nil)
	}
	allocs, idx, err = nodeAllocs(read, w.id)
	if err != nil {
		return nil, 0, false, err
	}
	w.read1, w.lastEntry = true, entry
	return allocs, max(idx, entry), false, nil
}

// allocsGet answers the named allocations with their jobs, sorted by ID,
// leaving out the jobs the client holds.
func (s *Server) allocsGet(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	var req AllocsGetRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	held := heldIndex(req.HeldJobs)
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		out := &AllocsGetResponse{Allocs: make([]*structs.Allocation, 0, len(req.AllocIDs))}
		for _, id := range req.AllocIDs {
			a, err := snap.AllocByID(id)
			if err != nil {
				return nil, 0, err
			}
			if a == nil {
				continue
			}
			if err := ownAlloc(r, a); err != nil {
				return nil, 0, err
			}
			out.Index = max(out.Index, allocIndex(a))
			if i, ok := held[a.Job.Ref()]; ok && a.Job != nil {
				if out.FromHeld == nil {
					out.FromHeld = map[string]int{}
				}
				out.FromHeld[a.ID] = i
				c := *a
				c.Job = nil
				a = &c
			}
			out.Allocs = append(out.Allocs, a)
		}
		if len(out.Allocs) == 0 {
			if out.Index, err = snap.Index(state.TableAllocs); err != nil {
				return nil, 0, err
			}
		}
		sort.Slice(out.Allocs, func(a, b int) bool { return out.Allocs[a].ID < out.Allocs[b].ID })
		return out, out.Index, nil
	})
}

// nodeAllocs returns the node's allocations and the index of the node's
// allocations queries: the highest allocIndex among them, or the allocs
// table's index when the node has none.
func nodeAllocs(snap *state.Snapshot, nodeID string) ([]*structs.Allocation, uint64, error) {
	allocs, err := snap.AllocsByNode(nodeID)
	if err != nil {
		return nil, 0, err
	}
	var idx uint64
	for _, a := range allocs {
		idx = max(idx, allocIndex(a))
	}
	if len(allocs) == 0 {
		if idx, err = snap.Index(state.TableAllocs); err != nil {
			return nil, 0, err
		}
	}
	return allocs, idx, nil
}

// allocIndex is the index of the servers' last change to an allocation
// (structs.Allocation.ServersIndex).
func allocIndex(a *structs.Allocation) uint64 { return a.ServersIndex() }

func (s *Server) allocsUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	cb, err := s.clientBackend()
	if err != nil {
		return nil, err
	}
	var req AllocUpdateRequest
	if err := decodeEncodedBody(r, &req); err != nil {
		return nil, err
	}
	// Only what a client may report crosses: nothing of the servers'
	// desires or placement.
	allocs := make([]*structs.Allocation, 0, len(req.Allocs))
	snap := s.backend.State().Snapshot()
	for _, a := range req.Allocs {
		if a == nil || a.ID == "" {
			return nil, Errorf(http.StatusBadRequest, "alloc update without ID")
		}
		if authzOf(r).node != nil {
			stored, err := snap.AllocByID(a.ID)
			if err != nil {
				return nil, err
			}
			if stored != nil {
				if err := ownAlloc(r, stored); err != nil {
					return nil, err
				}
			}
		}
		switch a.ClientStatus {
		case "", structs.AllocClientStatusPending, structs.AllocClientStatusRunning,
			structs.AllocClientStatusComplete, structs.AllocClientStatusFailed:
		default:
			return nil, Errorf(http.StatusBadRequest, "alloc %s: a client cannot report status %q", a.ID, a.ClientStatus)
		}
		if ns := a.NetworkStatus; ns != nil && ((ns.Address != "" && net.ParseIP(ns.Address) == nil) || len(ns.InterfaceName) > 15 ||
			(ns.AddressIPv6 != "" && net.ParseIP(ns.AddressIPv6) == nil)) {
			return nil, Errorf(http.StatusBadRequest, "alloc %s: NetworkStatus must give an IP Address (or none) and an InterfaceName of at most 15 characters", a.ID)
		}
		allocs = append(allocs, &structs.Allocation{
			ID: a.ID, ClientStatus: a.ClientStatus, ClientDescription: a.ClientDescription,
			TaskStates: a.TaskStates, DeploymentStatus: a.DeploymentStatus, NetworkStatus: a.NetworkStatus,
		})
	}
	index, err := cb.UpdateAllocsFromClient(r.Context(), allocs)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, index)
	return &AllocUpdateResponse{Index: index}, nil
}

// ownAlloc refuses, with ACLs on, an allocation of another node than the
// one whose secret the request presents.
func ownAlloc(r *http.Request, a *structs.Allocation) error {
	n := authzOf(r).node
	if n == nil || a.NodeID == n.ID {
		return nil
	}
	return Errorf(http.StatusForbidden, "%s: node %s may not read or update allocation %s of another node: %w",
		ErrPermissionDenied, n.ID, a.ID, ErrPermissionDenied)
}
