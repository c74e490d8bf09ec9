package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The variables endpoints, Nomad's paths and shapes (api.Variable,
// api.VariableMetadata); see website/variables.md:
//
//	GET    /v1/vars?prefix=&namespace=   → []VariableMetadata (no Items); namespace=* lists every
//	                                       namespace; only the variables the token may list
//	GET    /v1/var/{path}                → Variable; 404 "variable not found"
//	PUT    /v1/var/{path}?cas=N          Variable → the Variable written; 409 with the current
//	                                       Variable when its ModifyIndex is not N (0: must not exist)
//	DELETE /v1/var/{path}?cas=N          → 204; 409 with the current Variable as above
//	PUT    /v1/var/{path}?lock-acquire   Variable{Items, Lock{TTL, LockDelay}} → the Variable
//	                                       written with its Lock (ID, TTL, LockDelay; defaults
//	                                       15s and 15s, TTL 10s–24h); 409 naming only the path
//	                                       when another holds the lock
//	PUT    /v1/var/{path}?lock-renew     Variable{Lock{ID}} → VariableMetadata: the lease runs
//	                                       TTL from now; 409 when the lock is another's or ran out
//	PUT    /v1/var/{path}?lock-release   Variable{Lock{ID}} (no Items) → the Variable, unlocked
//
// A locked variable is written, deleted or released only by a request
// that names its lock's ID (Lock.ID in the body); others get a 409 naming
// only the path. A lock that is not renewed within its TTL is released by
// the leader LockDelay later (server/varlocks.go). Reads and lists show a
// variable's Lock to a management token (and with ACLs off), as Nomad's.
//
// Both reads are blocking queries (?index=, ?wait=, X-Nomad-Index). A
// write's items are sealed here, on the leader (writes are forwarded to
// it), under the keyring's active key, with a fresh random nonce, before
// the entry goes to Raft: no item is in the clear in the log, in a
// snapshot or on disk. Any server opens them to answer a read.
//
// With ACLs on, each route needs the variables capability (list, read,
// write, destroy) on the path in the request's namespace (acl.AllowVariableOp);
// a workload identity reads its own job's paths (acl.NewWorkload).

func init() {
	register(
		route{"GET /v1/vars", readRoute, varsCap(acl.VariablesCapabilityList), (*Server).varsList},
		route{"GET /v1/var/{path...}", readRoute, varsCap(acl.VariablesCapabilityRead), (*Server).varRead},
		route{"PUT /v1/var/{path...}", writeRoute, varsCap(acl.VariablesCapabilityWrite), (*Server).varWrite},
		route{"POST /v1/var/{path...}", writeRoute, varsCap(acl.VariablesCapabilityWrite), (*Server).varWrite},
		route{"DELETE /v1/var/{path...}", writeRoute, varsCap(acl.VariablesCapabilityDestroy), (*Server).varDelete},
	)
}

// varsCap needs a variables capability on the path the request names
// (or, for a list, on some path of its namespace).
func varsCap(capability string) need { return need{kind: needVariables, capability: capability} }

// allowsVariables answers a variables need: the capability on the path
// of the request, or for the list route (no path), list somewhere in the
// namespace; the handler filters the list.
func allowsVariables(a *acl.ACL, n need, r *http.Request) bool {
	ns := namespaceOf(r)
	if n.capability == acl.VariablesCapabilityList && r.PathValue("path") == "" {
		return a.AllowVariableSearch(ns)
	}
	return ns != "*" && a.AllowVariableOp(ns, cleanVarPath(r.PathValue("path")), n.capability)
}

// cleanVarPath drops the leading and trailing slashes and spaces, as
// Nomad's client does before it sends a path.
func cleanVarPath(p string) string { return strings.Trim(p, " /") }

// checkVarPathInURL answers 400 to a /v1/var/ request whose path has a
// "." or ".." segment or an empty one (leading and trailing slashes
// aside), before the router would clean it into another path (and
// redirect there).
func checkVarPathInURL(r *http.Request) error {
	p, ok := strings.CutPrefix(r.URL.Path, "/v1/var/")
	if !ok || strings.Trim(p, "/") == "" {
		return nil // no path: the handler says so
	}
	for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
		switch seg {
		case ".", "..":
			return Errorf(http.StatusBadRequest, "Path: invalid path %q: %q segments are not allowed", p, seg)
		case "":
			return Errorf(http.StatusBadRequest, "Path: invalid path %q: empty segment", p)
		}
	}
	return nil
}

// varNamespace is the request's namespace for one variable: not "*".
func varNamespace(o QueryOptions) (string, error) {
	if o.Namespace == "*" {
		return "", Errorf(http.StatusBadRequest, `Namespace: can not target wildcard ("*") namespace`)
	}
	return o.Namespace, nil
}

// openVar opens a stored variable's items with the snapshot's keyring.
func openVar(snap *state.Snapshot, ve *structs.VariableEncrypted) (*structs.Variable, error) {
	v, err := keyring.Open(ve, snap.RootKeyByID)
	if err != nil {
		return nil, Errorf(http.StatusInternalServerError, "reading variable %q: %w", ve.Path, err)
	}
	return v, nil
}

func (s *Server) varsList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	z := authzOf(r)
	locks := showsLocks(r)
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		vs, err := snap.VarsByPrefix(o.Namespace, o.Prefix)
		if err != nil {
			return nil, 0, err
		}
		out := []structs.VariableMetadata{}
		for _, v := range vs {
			if z.enabled && !z.acl.AllowVariableOp(v.Namespace, v.Path, acl.VariablesCapabilityList) {
				continue
			}
			m := v.VariableMetadata
			if !locks {
				m.Lock = nil
			}
			out = append(out, m)
		}
		// Paged as Nomad's; namespaces are [a-zA-Z0-9-] and paths have
		// no space, so the key orders by namespace, then path.
		out = paginate(w, o, out, func(m structs.VariableMetadata) string { return m.Namespace + " " + m.Path })
		idx, err := snap.Index(state.TableVariables)
		return out, idx, err
	})
}

func (s *Server) varRead(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	ns, err := varNamespace(o)
	if err != nil {
		return nil, err
	}
	path := cleanVarPath(r.PathValue("path"))
	if err := structs.ValidateVariablePath(path); err != nil {
		return nil, Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), structs.ErrVariableInvalid.Error()+": "))
	}
	out, err := s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.Index(state.TableVariables)
		if err != nil {
			return nil, 0, err
		}
		ve, err := snap.VarGet(ns, path)
		if err != nil || ve == nil {
			return nil, idx, err
		}
		v, err := openVar(snap, ve)
		if v != nil && !showsLocks(r) {
			v.Lock = nil
		}
		return v, idx, err
	})
	if err != nil {
		return nil, err
	}
	if out == nil || out.(*structs.Variable) == nil {
		return nil, Errorf(http.StatusNotFound, "variable not found")
	}
	return out, nil
}

// casParam reads ?cas=: whether it is there, and its index.
func casParam(r *http.Request) (bool, uint64, error) {
	q := r.URL.Query()
	if !q.Has("cas") {
		return false, 0, nil
	}
	n, err := strconv.ParseUint(q.Get("cas"), 10, 64)
	if err != nil {
		return false, 0, Errorf(http.StatusBadRequest, "invalid cas %q: want a ModifyIndex", q.Get("cas"))
	}
	return true, n, nil
}

// varLockParams are Nomad's lock operations.
var varLockParams = []string{structs.VarLockOpAcquire, structs.VarLockOpRenew, structs.VarLockOpRelease}

// varLockParam returns the lock operation the query names ("" for none);
// two are a 400.
func varLockParam(r *http.Request) (string, error) {
	op := ""
	for _, p := range varLockParams {
		if r.URL.Query().Has(p) {
			if op != "" {
				return "", Errorf(http.StatusBadRequest, "only one lock operation at a time: %s and %s", op, p)
			}
			op = p
		}
	}
	return op, nil
}

// showsLocks reports whether the caller sees variables' locks: a
// management token, or anyone with ACLs off, as Nomad's.
func showsLocks(r *http.Request) bool {
	z := authzOf(r)
	return !z.enabled || z.acl.IsManagement()
}

func (s *Server) varWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	ns, err := varNamespace(o)
	if err != nil {
		return nil, err
	}
	lockOp, err := varLockParam(r)
	if err != nil {
		return nil, err
	}
	cas, check, err := casParam(r)
	if err != nil {
		return nil, err
	}
	if cas && lockOp != "" {
		return nil, Errorf(http.StatusBadRequest, "CAS can't be used with lock operations")
	}
	var in structs.Variable
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	path := cleanVarPath(r.PathValue("path"))
	switch {
	case in.Namespace != "" && in.Namespace != ns:
		return nil, Errorf(http.StatusBadRequest, "Namespace: the body names namespace %q, the request %q", in.Namespace, ns)
	case in.Path != "" && cleanVarPath(in.Path) != path:
		return nil, Errorf(http.StatusBadRequest, "Path: the body names path %q, the URL %q", in.Path, path)
	}
	switch lockOp {
	case structs.VarLockOpAcquire:
		return s.varLockAcquire(w, r, ns, path, &in)
	case structs.VarLockOpRenew, structs.VarLockOpRelease:
		return s.varLockRenewRelease(w, r, lockOp, ns, path, &in)
	}
	if in.Lock != nil && (in.Lock.TTL != 0 || in.Lock.LockDelay != 0) {
		return nil, Errorf(http.StatusBadRequest, "variable should not contain lock definition")
	}
	if in.Items == nil {
		// Nomad's words for a body without Items ({} is "empty
		// variables are invalid", below).
		return nil, Errorf(http.StatusBadRequest, "variable missing required Items object")
	}
	v := &structs.Variable{Namespace: ns, Path: path, Items: in.Items, Lock: in.Lock}
	if err := structs.ValidateVariable(v); err != nil {
		return nil, Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), structs.ErrVariableInvalid.Error()+": "))
	}
	if err := checkNamespaceExists(s.backend.State().Snapshot(), "variable", path, ns); err != nil {
		return nil, err
	}
	sealed, err := s.sealVar(r.Context(), v)
	if err != nil {
		return nil, err
	}
	req := &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealed}
	if cas {
		req.Op, req.CheckIndex = structs.VarOpCAS, check
	}
	res, index, err := s.applyVar(w, r, req)
	if err != nil {
		return nil, err
	}
	if res.Conflicted {
		return s.varConflict(w, r, ns, path, res.Conflict)
	}
	return writtenVar(r, res.Written, index, v.Items, in.Lock), nil
}

// sealVar stamps v's times (the leader's clock) and seals its items under
// the keyring's active key with a fresh nonce.
func (s *Server) sealVar(ctx context.Context, v *structs.Variable) (*structs.VariableEncrypted, error) {
	key, err := s.ensureRootKey(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now().UnixNano()
	v.CreateTime, v.ModifyTime = now, now
	nonce, err := keyring.NewNonce(rand.Reader)
	if err != nil {
		return nil, err
	}
	return keyring.Seal(key, nonce, v)
}

// writtenVar is the answer to a write: the variable as stored, with the
// items the caller sent; its lock shown to the holder (the caller named
// its ID) and to whoever sees locks.
func writtenVar(r *http.Request, written *structs.VariableEncrypted, index uint64, items structs.VariableItems, callerLock *structs.VariableLock) *structs.Variable {
	m := written.VariableMetadata
	out := &structs.Variable{Namespace: m.Namespace, Path: m.Path, CreateIndex: m.CreateIndex, ModifyIndex: index,
		CreateTime: m.CreateTime, ModifyTime: m.ModifyTime, Items: items}
	if m.Lock != nil && (showsLocks(r) || callerLock != nil && callerLock.ID == m.Lock.ID) {
		out.Lock = m.Lock.Copy()
	}
	return out
}

// varLockAcquire writes the variable with a lock: the caller's (its ID
// kept when it names one, to take the lock again) or a new one, Nomad's
// defaults filled and its durations checked.
func (s *Server) varLockAcquire(w http.ResponseWriter, r *http.Request, ns, path string, in *structs.Variable) (any, error) {
	lock := in.Lock.Copy()
	if lock == nil {
		lock = &structs.VariableLock{}
	}
	if lock.ID == "" {
		lock.ID = structs.GenerateUUID()
	}
	lock.Canonicalize()
	if err := lock.Validate(); err != nil {
		return nil, Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), structs.ErrVariableInvalid.Error()+": "))
	}
	items := in.Items
	if items == nil {
		items = structs.VariableItems{}
	}
	v := &structs.Variable{Namespace: ns, Path: path, Items: items, Lock: lock}
	if err := structs.ValidateVariablePath(path); err != nil {
		return nil, Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), structs.ErrVariableInvalid.Error()+": "))
	}
	if items.Size() > structs.MaxVariableSize {
		return nil, Errorf(http.StatusBadRequest, "Items: %d bytes, more than the %d allowed", items.Size(), structs.MaxVariableSize)
	}
	if err := checkNamespaceExists(s.backend.State().Snapshot(), "variable", path, ns); err != nil {
		return nil, err
	}
	sealed, err := s.sealVar(r.Context(), v)
	if err != nil {
		return nil, err
	}
	res, index, err := s.applyVarLock(w, r, &structs.VarLockRequest{Op: structs.VarLockOpAcquire, Var: sealed, LockID: lock.ID, Now: s.now().UnixNano()})
	if err != nil {
		return nil, err
	}
	if res.Conflicted {
		return s.varConflict(w, r, ns, path, res.Conflict)
	}
	return writtenVar(r, res.Written, index, in.Items, lock), nil
}

// varLockRenewRelease renews or releases the lock the body's Lock.ID
// names.
func (s *Server) varLockRenewRelease(w http.ResponseWriter, r *http.Request, op, ns, path string, in *structs.Variable) (any, error) {
	if in.Lock == nil || in.Lock.ID == "" {
		if op == structs.VarLockOpRenew {
			return nil, Errorf(http.StatusBadRequest, "Lock.ID: missing lock ID")
		}
		return nil, Errorf(http.StatusBadRequest, "Lock.ID: missing lock information")
	}
	if op == structs.VarLockOpRelease && in.Items != nil {
		return nil, Errorf(http.StatusBadRequest, "lock release operation doesn't take variable items")
	}
	if err := structs.ValidateVariablePath(path); err != nil {
		return nil, Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), structs.ErrVariableInvalid.Error()+": "))
	}
	req := &structs.VarLockRequest{Op: op, LockID: in.Lock.ID, Now: s.now().UnixNano(),
		Var: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: ns, Path: path}}}
	res, index, err := s.applyVarLock(w, r, req)
	if err != nil {
		return nil, err
	}
	if res.Conflicted {
		return s.varConflict(w, r, ns, path, res.Conflict)
	}
	if op == structs.VarLockOpRenew {
		// As Nomad's: the variable's metadata, at its own index (a
		// renewal changes only the lease).
		m := res.Written.VariableMetadata
		s.setMeta(w, m.ModifyIndex)
		return &m, nil
	}
	return writtenVar(r, res.Written, index, nil, nil), nil
}

// applyVarLock writes one lock entry and sets the index header; the
// store's refusals become their answers (404, 409).
func (s *Server) applyVarLock(w http.ResponseWriter, r *http.Request, req *structs.VarLockRequest) (*structs.VarApplyResult, uint64, error) {
	resp, index, err := s.backend.Apply(r.Context(), fsm.VarLockRequestType, req)
	switch {
	case errors.Is(err, state.ErrVarNotFound):
		return nil, 0, Errorf(http.StatusNotFound, "%s", state.ErrVarNotFound)
	case errors.Is(err, state.ErrVarLockNotHeld):
		return nil, 0, Errorf(http.StatusConflict, "%s", state.ErrVarLockNotHeld)
	case errors.Is(err, state.ErrVarLocked):
		return nil, 0, Errorf(http.StatusConflict, "%s", state.ErrVarLocked)
	case err != nil:
		return nil, 0, err
	}
	res, ok := resp.(*structs.VarApplyResult)
	if !ok {
		return nil, 0, Errorf(http.StatusInternalServerError, "unexpected answer %T to a variable lock", resp)
	}
	s.setMeta(w, index)
	return res, index, nil
}

func (s *Server) varDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	ns, err := varNamespace(o)
	if err != nil {
		return nil, err
	}
	cas, check, err := casParam(r)
	if err != nil {
		return nil, err
	}
	path := cleanVarPath(r.PathValue("path"))
	if err := structs.ValidateVariablePath(path); err != nil {
		return nil, Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), structs.ErrVariableInvalid.Error()+": "))
	}
	req := &structs.VarApplyRequest{Op: structs.VarOpDelete, Var: &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: ns, Path: path}}}
	if cas {
		req.Op, req.CheckIndex = structs.VarOpDeleteCAS, check
	}
	res, _, err := s.applyVar(w, r, req)
	if err != nil {
		return nil, err
	}
	if res.Conflicted {
		return s.varConflict(w, r, ns, path, res.Conflict)
	}
	w.WriteHeader(http.StatusNoContent)
	return written{}, nil
}

// applyVar writes one variable entry and sets the index header.
func (s *Server) applyVar(w http.ResponseWriter, r *http.Request, req *structs.VarApplyRequest) (*structs.VarApplyResult, uint64, error) {
	resp, index, err := s.backend.Apply(r.Context(), fsm.VarApplyRequestType, req)
	if err != nil {
		return nil, 0, err
	}
	res, ok := resp.(*structs.VarApplyResult)
	if !ok {
		return nil, 0, Errorf(http.StatusInternalServerError, "unexpected answer %T to a variable write", resp)
	}
	s.setMeta(w, index)
	return res, index, nil
}

// varConflict answers 409 with the current variable, as Nomad's (the Go
// client turns it into api.ErrCASConflict): with its items when the
// caller may read it, without otherwise; only the namespace and path
// when there is none.
func (s *Server) varConflict(w http.ResponseWriter, r *http.Request, ns, path string, cur *structs.VariableEncrypted) (any, error) {
	out := &structs.Variable{Namespace: ns, Path: path}
	if cur != nil && cur.KeyID == "" {
		// A lock refused the write: only the path, as Nomad's.
		out.Lock = cur.Lock.Copy()
	} else if cur != nil {
		z := authzOf(r)
		if !z.enabled || z.acl.AllowVariableOp(ns, path, acl.VariablesCapabilityRead) {
			v, err := openVar(s.backend.State().Snapshot(), cur)
			if err != nil {
				return nil, err
			}
			out = v
			if !showsLocks(r) {
				out.Lock = nil
			}
		} else {
			m := cur.VariableMetadata
			out = &structs.Variable{Namespace: m.Namespace, Path: m.Path, CreateIndex: m.CreateIndex,
				ModifyIndex: m.ModifyIndex, CreateTime: m.CreateTime, ModifyTime: m.ModifyTime}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusConflict)
	_, _ = w.Write(append(b, '\n'))
	return written{}, nil
}

// errNoRootKey: a follower asked to seal or sign before the leader made
// the keyring's first key.
var errNoRootKey = errors.New("the keyring has no key yet")

// ensureRootKey returns the keyring's active key; on the leader, when
// the keyring is empty, it makes the first one (a key made by another
// leader at the same time wins, and is the one returned).
func (s *Server) ensureRootKey(ctx context.Context) (*structs.RootKey, error) {
	if k, err := s.backend.State().Snapshot().ActiveRootKey(); err != nil || k != nil {
		return k, err
	}
	if !s.backend.IsLeader() {
		return nil, Errorf(http.StatusServiceUnavailable, "%s: %w", errNoRootKey, errNoRootKey)
	}
	k, err := keyring.NewRootKey(structs.GenerateUUID(), s.now(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.backend.Apply(ctx, fsm.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{Key: k, OnlyIfNone: true}); err != nil {
		return nil, err
	}
	clear(k.Key)
	clear(k.RSAKey)
	k, err = s.backend.State().Snapshot().ActiveRootKey()
	if err == nil && k == nil {
		err = Errorf(http.StatusInternalServerError, "%s", errNoRootKey)
	}
	return k, err
}

// EnsureKeyring makes the keyring's first key when it has none; the
// leader runs it when it takes office, so that the first write need not.
func (s *Server) EnsureKeyring(ctx context.Context) error {
	_, err := s.ensureRootKey(ctx)
	return err
}

// CheckVarPaths answers 400 to a /v1/var/ request whose path has "." or
// ".." segments, before h (an agent's router, which would clean the path
// and redirect to another variable) sees it.
func CheckVarPaths(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkVarPathInURL(r); err != nil {
			writeError(w, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}
