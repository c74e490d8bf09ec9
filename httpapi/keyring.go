package httpapi

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The keyring endpoints, Nomad's paths and shapes (api.RootKeyMeta); a
// key's material is never answered:
//
//	GET /v1/operator/keyring/keys     → []RootKeyMeta (management)
//	PUT /v1/operator/keyring/rotate   → {"Key": RootKeyMeta}, the new active key, indexes zero as
//	                                    Nomad's (management);
//	                                    ?algo=aes256-gcm only; ?full=true encrypts every variable
//	                                    again under the new key; ?publish_time is refused
//	DELETE /v1/operator/keyring/key/{id}?force=  → null; an inactive key (management); 409 while it
//	                                    still encrypts a variable, unless force
//
// and the workload identities, for client nodes:
//
//	PUT /v1/internal/alloc/{id}/identity  AllocIdentityRequest → AllocIdentityResponse
//	    (the secret of the node the allocation is on; 400 for an allocation that is terminal)

func init() {
	register(
		route{"GET /v1/operator/keyring/keys", readRoute, management, (*Server).keyringList},
		route{"PUT /v1/operator/keyring/rotate", writeRoute, management, (*Server).keyringRotate},
		route{"POST /v1/operator/keyring/rotate", writeRoute, management, (*Server).keyringRotate},
		route{"DELETE /v1/operator/keyring/key/{id}", writeRoute, management, (*Server).keyringDelete},
		route{"PUT /v1/internal/alloc/{id}/identity", readRoute, nodeAny, (*Server).allocIdentity},
	)
}

func (s *Server) keyringList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		keys, err := snap.RootKeys()
		if err != nil {
			return nil, 0, err
		}
		out := []structs.RootKeyMeta{}
		for _, k := range keys {
			out = append(out, k.RootKeyMeta)
		}
		idx, err := snap.Index(state.TableRootKeys)
		return out, idx, err
	})
}

func (s *Server) keyringRotate(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	if a := q.Get("algo"); a != "" && a != structs.EncryptionAlgorithmAES256GCM {
		return nil, Errorf(http.StatusBadRequest, "algo: unsupported algorithm %q: only %s", a, structs.EncryptionAlgorithmAES256GCM)
	}
	full, err := queryBool(r, "full")
	if err != nil {
		return nil, err
	}
	if q.Get("publish_time") != "" {
		return nil, Errorf(http.StatusBadRequest, "publish_time: prepublished keys are not supported")
	}
	k, err := keyring.NewRootKey(structs.GenerateUUID(), s.now(), rand.Reader)
	if err != nil {
		return nil, err
	}
	_, index, err := s.backend.Apply(r.Context(), fsm.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{Key: k})
	clear(k.Key)
	clear(k.RSAKey)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, index)
	stored, err := s.backend.State().Snapshot().RootKeyByID(k.KeyID)
	if err != nil {
		return nil, err
	}
	if stored == nil {
		return nil, Errorf(http.StatusInternalServerError, "the new key %s is not in the keyring", k.KeyID)
	}
	if full {
		n, err := s.rekey(r.Context(), stored)
		if err != nil {
			return nil, err
		}
		s.logger.Info("keyring rotated; variables encrypted again under the new key", "key_id", stored.KeyID, "variables", n)
	}
	// Nomad answers the key as it made it, before the write: its indexes
	// are zero (the write's is X-Nomad-Index), so that a list blocking on
	// the key's CreateIndex does not wait for the next change.
	meta := stored.RootKeyMeta
	meta.CreateIndex, meta.ModifyIndex = 0, 0
	return struct{ Key structs.RootKeyMeta }{meta}, nil
}

// rekey encrypts every variable sealed under another key again under
// key, each with a check-and-set on its ModifyIndex (a variable written
// meanwhile was sealed under key already), keeping its times. It
// answers how many it wrote.
func (s *Server) rekey(ctx context.Context, key *structs.RootKey) (int, error) {
	snap := s.backend.State().Snapshot()
	vars, err := snap.VarsByPrefix("*", "")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ve := range vars {
		if ve.KeyID == key.KeyID {
			continue
		}
		v, err := keyring.Open(ve, snap.RootKeyByID)
		if err != nil {
			return n, Errorf(http.StatusInternalServerError, "encrypting variable %q again: %w", ve.Path, err)
		}
		nonce, err := keyring.NewNonce(rand.Reader)
		if err != nil {
			return n, err
		}
		sealed, err := keyring.Seal(key, nonce, v)
		clear(v.Items)
		if err != nil {
			return n, err
		}
		resp, _, err := s.backend.Apply(ctx, fsm.VarApplyRequestType, &structs.VarApplyRequest{Op: structs.VarOpCAS, CheckIndex: ve.ModifyIndex, Var: sealed})
		if err != nil {
			return n, err
		}
		if res, ok := resp.(*structs.VarApplyResult); ok && !res.Conflicted {
			n++
		}
	}
	return n, nil
}

func (s *Server) keyringDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	force, err := queryBool(r, "force")
	if err != nil {
		return nil, err
	}
	_, index, err := s.backend.Apply(r.Context(), fsm.RootKeyDeleteRequestType, &structs.RootKeyDeleteRequest{KeyID: r.PathValue("id"), Force: force})
	if errors.Is(err, state.ErrConflict) {
		return nil, Errorf(http.StatusConflict, "%s", err)
	}
	if err != nil {
		return nil, err
	}
	s.setMeta(w, index)
	return nil, nil
}

func (s *Server) allocIdentity(w http.ResponseWriter, r *http.Request) (any, error) {
	var req structs.AllocIdentityRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	snap := s.backend.State().Snapshot()
	alloc, err := snap.AllocByID(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if alloc == nil {
		return nil, Errorf(http.StatusNotFound, "allocation %q not found", r.PathValue("id"))
	}
	// With ACLs on, the check let in a registered node's secret; without,
	// a presented secret must still be the node's.
	node := authzOf(r).node
	if node == nil {
		if secret := TokenFromRequest(r); secret != "" {
			if node, err = snap.NodeBySecretHash(structs.HashSecret(secret)); err != nil {
				return nil, err
			}
		}
	}
	if (node != nil || s.aclConfig.Enabled) && (node == nil || node.ID != alloc.NodeID) {
		return nil, Errorf(http.StatusForbidden, "%s: allocation %s is not on the calling node: %w", ErrPermissionDenied, alloc.ID, ErrPermissionDenied)
	}
	if alloc.TerminalStatus() {
		return nil, Errorf(http.StatusBadRequest, "allocation %s is terminal: it has no workload identity", alloc.ID)
	}
	var tasks []string
	if alloc.Job != nil {
		if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
			for _, t := range tg.Tasks {
				tasks = append(tasks, t.Name)
			}
		}
	}
	want := req.Tasks
	if len(want) == 0 {
		want = tasks
	}
	key, err := s.ensureRootKey(r.Context())
	if err != nil {
		return nil, err
	}
	out := &structs.AllocIdentityResponse{AllocID: alloc.ID}
	for _, t := range want {
		if !slices.Contains(tasks, t) {
			return nil, Errorf(http.StatusBadRequest, "Tasks: allocation %s has no task %q", alloc.ID, t)
		}
		jwt, err := keyring.SignIdentity(key, keyring.IdentityClaims{
			Namespace: alloc.Namespace, JobID: alloc.JobID, Group: alloc.TaskGroup, Task: t, AllocationID: alloc.ID,
		}, s.now())
		if err != nil {
			return nil, err
		}
		out.Identities = append(out.Identities, structs.TaskIdentity{Task: t, JWT: jwt})
	}
	return out, nil
}

// resolveIdentity returns the ACL of a workload identity: a signature by
// a key of the keyring, for an allocation that is still there and not
// terminal, whose namespace, job and group are the identity's.
func (s *Server) resolveIdentity(snap *state.Snapshot, token string) (*acl.ACL, error) {
	c, err := keyring.VerifyIdentity(token, snap.RootKeyByID, s.now())
	if err != nil {
		return nil, Errorf(http.StatusForbidden, "%s: %w", ErrTokenNotFound, ErrTokenNotFound)
	}
	alloc, err := snap.AllocByID(c.AllocationID)
	if err != nil {
		return nil, err
	}
	switch {
	case alloc == nil:
		return nil, Errorf(http.StatusForbidden, "%s: the identity's allocation is gone: %w", ErrTokenNotFound, ErrTokenNotFound)
	case alloc.TerminalStatus():
		return nil, Errorf(http.StatusForbidden, "%s: the identity's allocation is terminal: %w", ErrTokenNotFound, ErrTokenNotFound)
	case alloc.Namespace != c.Namespace || alloc.JobID != c.JobID || alloc.TaskGroup != c.Group:
		return nil, Errorf(http.StatusForbidden, "%s: %s", ErrTokenNotFound, fmt.Errorf("the identity does not match its allocation: %w", ErrTokenNotFound))
	}
	w := acl.Workload{Namespace: c.Namespace, JobID: c.JobID, Group: c.Group, Task: c.Task}
	if alloc.Job != nil {
		w.ParentID = alloc.Job.ParentID
	}
	return acl.NewWorkload(w), nil
}
