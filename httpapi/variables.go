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
			out = append(out, v.VariableMetadata)
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

// varLockParams are Nomad's lock operations, which drover has not.
var varLockParams = []string{"lock-acquire", "lock-renew", "lock-release"}

func (s *Server) varWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	ns, err := varNamespace(o)
	if err != nil {
		return nil, err
	}
	for _, p := range varLockParams {
		if r.URL.Query().Has(p) {
			return nil, Errorf(http.StatusBadRequest, "variable locks (%s) are not supported", p)
		}
	}
	cas, check, err := casParam(r)
	if err != nil {
		return nil, err
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
	if in.Items == nil {
		// Nomad's words for a body without Items ({} is "empty
		// variables are invalid", below).
		return nil, Errorf(http.StatusBadRequest, "variable missing required Items object")
	}
	v := &structs.Variable{Namespace: ns, Path: path, Items: in.Items}
	if err := structs.ValidateVariable(v); err != nil {
		return nil, Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), structs.ErrVariableInvalid.Error()+": "))
	}
	if err := checkNamespaceExists(s.backend.State().Snapshot(), "variable", path, ns); err != nil {
		return nil, err
	}
	key, err := s.ensureRootKey(r.Context())
	if err != nil {
		return nil, err
	}
	now := s.now().UnixNano()
	v.CreateTime, v.ModifyTime = now, now
	nonce, err := keyring.NewNonce(rand.Reader)
	if err != nil {
		return nil, err
	}
	sealed, err := keyring.Seal(key, nonce, v)
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
	m := res.Written.VariableMetadata
	return &structs.Variable{Namespace: m.Namespace, Path: m.Path, CreateIndex: m.CreateIndex, ModifyIndex: index,
		CreateTime: m.CreateTime, ModifyTime: m.ModifyTime, Items: v.Items}, nil
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
	if cur != nil {
		z := authzOf(r)
		if !z.enabled || z.acl.AllowVariableOp(ns, path, acl.VariablesCapabilityRead) {
			v, err := openVar(s.backend.State().Snapshot(), cur)
			if err != nil {
				return nil, err
			}
			out = v
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
