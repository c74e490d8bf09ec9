package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// With ACLs on, the client endpoints (/v1/client/) check the request's
// token (X-Nomad-Token) before anything else, on every agent that serves
// them, the one that forwards a request to the allocation's node and the
// node itself:
//
//	GET /v1/client/fs/logs/{alloc}            namespace:read-logs in the allocation's namespace
//	GET /v1/client/fs/…/{alloc}               namespace:read-fs
//	GET /v1/client/allocation/{alloc}/stats   namespace:read-job
//	GET /v1/client/allocation/{alloc}/checks  namespace:read-job
//	GET /v1/client/allocation/{alloc}/exec    namespace:alloc-exec, and alloc-node-exec
//	                                          into a task without isolation (raw_exec)
//	PUT /v1/client/allocation/{alloc}/restart namespace:alloc-lifecycle (signal too)
//	GET /v1/client/stats                      node:read
//	GET /v1/client/identity                   node:read
//	PUT /v1/client/identity/renew             node:write
//	anything else under /v1/client/           a management token
//
// A server agent resolves the token against its own copy of the state,
// with no cache. A client agent asks the servers (PUT
// /v1/internal/acl/resolve, as its node) and keeps the answer for
// acl.token_ttl (the shorter of token_ttl and policy_ttl, 5s by default;
// never past the token's expiry): a revoked token keeps working on a
// client's own endpoints for at most that long.

// ClientCapability returns what a request to the client endpoints needs:
// a namespace capability, or "node:read", or "management"; and the
// allocation it is about ("" for none).
func ClientCapability(r *http.Request) (capability, allocID string) {
	rest, _ := strings.CutPrefix(r.URL.Path, "/v1/client/")
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 3 && parts[0] == "fs" && parts[1] == "logs":
		return acl.NamespaceCapabilityReadLogs, parts[2]
	case len(parts) == 3 && parts[0] == "fs":
		return acl.NamespaceCapabilityReadFS, parts[2]
	case len(parts) == 3 && parts[0] == "allocation" && (parts[2] == "stats" || parts[2] == "checks"):
		return acl.NamespaceCapabilityReadJob, parts[1]
	case len(parts) == 3 && parts[0] == "allocation" && parts[2] == "exec":
		return acl.NamespaceCapabilityAllocExec, parts[1]
	case len(parts) == 3 && parts[0] == "allocation" && (parts[2] == "restart" || parts[2] == "signal"):
		return acl.NamespaceCapabilityAllocLifecycle, parts[1]
	case rest == "stats":
		return "node:read", ""
	case identityPaths[rest] != "":
		return identityPaths[rest], "" // client_identity.go
	}
	return "management", ""
}

// unisolated are the drivers whose tasks run on the host itself: exec
// into them needs alloc-node-exec too, as Nomad's.
var unisolated = map[string]bool{"raw_exec": true}

// CheckClientRequest reports whether a compiled ACL lets r through; alloc
// is the allocation the request is about (nil when none or unknown: its
// namespace is then "default").
func CheckClientRequest(a *acl.ACL, r *http.Request, alloc *structs.Allocation) error {
	capability, _ := ClientCapability(r)
	ns := structs.DefaultNamespace
	if alloc != nil && alloc.Namespace != "" {
		ns = alloc.Namespace
	}
	if capability == acl.NamespaceCapabilityAllocExec && a.AllowNamespaceOp(ns, capability) && execOnHost(alloc, r.URL.Query().Get("task")) {
		capability = acl.NamespaceCapabilityAllocNodeExec
	}
	ok := false
	switch capability {
	case "node:read":
		ok = a.AllowNodeRead()
	case "node:write":
		ok = a.AllowNodeWrite()
	case "management":
		ok = a.IsManagement()
	default:
		ok = a.AllowNamespaceOp(ns, capability)
	}
	if ok {
		return nil
	}
	what := capability
	if capability != "node:read" && capability != "node:write" && capability != "management" {
		what = fmt.Sprintf("%s in namespace %q", capability, ns)
	}
	return fmt.Errorf("%w: %s needs %s", httpapi.ErrPermissionDenied, r.URL.Path, what)
}

// execOnHost reports whether the task an exec names runs without
// isolation (an unknown task or allocation: no, the request then fails
// past the check).
func execOnHost(alloc *structs.Allocation, task string) bool {
	if alloc == nil || alloc.Job == nil {
		return false
	}
	for _, g := range alloc.Job.TaskGroups {
		if g.Name != alloc.TaskGroup {
			continue
		}
		for _, t := range g.Tasks {
			if t.Name == task {
				return unisolated[t.Driver]
			}
		}
	}
	return false
}

// tokenCache keeps what the servers said tokens grant, by the hash of
// their secret, for ttl.
type tokenCache struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[string]cachedACL
}

type cachedACL struct {
	acl   *acl.ACL
	err   error
	until time.Time
}

// tokenCacheSize bounds the cache; past it, it starts again empty.
const tokenCacheSize = 4096

// get returns the cached answer for secret, or asks resolve and keeps
// its answer (a refusal too, so that a flood of bad tokens is not a
// flood of calls to the servers) until ttl or the token's expiry.
func (c *tokenCache) get(secret string, resolve func() (*acl.ACL, *time.Time, error)) (*acl.ACL, error) {
	key := structs.HashSecret(secret)
	now := c.now()
	c.mu.Lock()
	if e, ok := c.m[key]; ok && now.Before(e.until) {
		c.mu.Unlock()
		return e.acl, e.err
	}
	c.mu.Unlock()
	a, expires, err := resolve()
	if err != nil && !errors.Is(err, httpapi.ErrTokenNotFound) {
		return nil, err // the servers could not be asked: not kept
	}
	until := now.Add(c.ttl)
	if expires != nil && expires.Before(until) {
		until = *expires
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= tokenCacheSize {
		c.m = map[string]cachedACL{}
	}
	c.m[key] = cachedACL{acl: a, err: err, until: until}
	return a, err
}

// resolveRemote turns the servers' answer into an ACL.
func resolveRemote(resp *structs.ACLResolveResponse) (*acl.ACL, *time.Time, error) {
	switch {
	case !resp.Found:
		return nil, nil, fmt.Errorf("%w", httpapi.ErrTokenNotFound)
	case resp.Management:
		return acl.ManagementACL, resp.ExpirationTime, nil
	}
	var ps []*acl.Policy
	for _, p := range resp.Policies {
		parsed, err := acl.Parse(p.Name, fmt.Sprintf("policy %q", p.Name), p.Rules)
		if err == nil {
			ps = append(ps, parsed)
		}
	}
	return acl.New(ps), resp.ExpirationTime, nil
}

// clientACL wraps the client endpoints with the token check, when ACLs
// are on.
func (a *Agent) clientACL(next http.Handler) http.Handler {
	if !a.cfg.ACLEnabled {
		return next
	}
	cache := &tokenCache{ttl: a.cfg.ACLTokenTTL, now: time.Now}
	resolve := func(ctx context.Context, secret string) (*acl.ACL, error) {
		if a.api != nil {
			// A server: its own state, no cache.
			return a.api.ResolveToken(secret)
		}
		return cache.get(secret, func() (*acl.ACL, *time.Time, error) {
			resp, err := a.client.ResolveACL(ctx, secret)
			if err != nil {
				return nil, nil, err
			}
			return resolveRemote(resp)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		granted, err := resolve(r.Context(), httpapi.TokenFromRequest(r))
		if err == nil {
			err = CheckClientRequest(granted, r, a.allocOf(r))
		}
		switch {
		case err == nil:
			next.ServeHTTP(w, r)
		case errors.Is(err, httpapi.ErrPermissionDenied), errors.Is(err, httpapi.ErrTokenNotFound),
			errors.Is(err, httpapi.ErrTokenExpired):
			writeClientError(w, &httpError{code: http.StatusForbidden, msg: err.Error()})
		default:
			a.logger.Warn("cannot check a client request's token", "path", r.URL.Path, "error", err)
			writeClientError(w, &httpError{code: http.StatusInternalServerError, msg: "checking the ACL token: " + err.Error()})
		}
	})
}

// allocOf is the allocation a client request is about, from the local
// client or the servers' state; nil when neither knows it (the request
// then answers 404 past the check).
func (a *Agent) allocOf(r *http.Request) *structs.Allocation {
	_, id := ClientCapability(r)
	if id == "" {
		return nil
	}
	if a.client != nil {
		if info, ok := a.client.Alloc(id); ok && info.Alloc != nil {
			return info.Alloc
		}
	}
	if a.fsm != nil {
		if al, err := a.fsm.State().Snapshot().AllocByID(id); err == nil && al != nil {
			return al
		}
	}
	return nil
}

// aclBootstrapResetFile is Nomad's bootstrap reset: an operator who lost
// the bootstrap token writes the reset index the second bootstrap
// answered with into this file under the data dir, and may bootstrap
// once more.
const aclBootstrapResetFile = "acl-bootstrap-reset"

// ACLBootstrapResetIndex implements httpapi.ACLBootstrapResetter: the
// index in data_dir/acl-bootstrap-reset, 0 when there is none.
func (a *Agent) ACLBootstrapResetIndex() uint64 {
	b, err := os.ReadFile(filepath.Join(a.cfg.DataDir, aclBootstrapResetFile))
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		a.logger.Warn("ignoring the ACL bootstrap reset file: it does not hold an index", "file", aclBootstrapResetFile)
		return 0
	}
	return n
}
