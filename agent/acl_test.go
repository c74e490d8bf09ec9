package agent

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

func TestClientEndpointsNeeds(t *testing.T) {
	readLogs, _ := acl.Parse("l", "l", `namespace "default" { capabilities = ["read-logs"] }`)
	readJob, _ := acl.Parse("j", "j", `namespace "default" { capabilities = ["read-job"] }`)
	nodeRead, _ := acl.Parse("n", "n", `node { policy = "read" }`)
	lifecycle, _ := acl.Parse("c", "c", `namespace "default" { capabilities = ["alloc-lifecycle", "alloc-exec"] }`)
	nodeExec, _ := acl.Parse("x", "x", `namespace "default" { capabilities = ["alloc-exec", "alloc-node-exec"] }`)
	for _, tc := range []struct {
		path string
		acl  *acl.ACL
		ns   string
		ok   bool
	}{
		{"/v1/client/allocation/a1/restart", acl.New([]*acl.Policy{lifecycle}), "default", true},
		{"/v1/client/allocation/a1/signal", acl.New([]*acl.Policy{readJob, readLogs}), "default", false},
		{"/v1/client/allocation/a1/exec?task=docker", acl.New([]*acl.Policy{lifecycle}), "default", true},
		{"/v1/client/allocation/a1/exec?task=raw", acl.New([]*acl.Policy{lifecycle}), "default", false},
		{"/v1/client/allocation/a1/exec?task=raw", acl.New([]*acl.Policy{nodeExec}), "default", true},
		{"/v1/client/allocation/a1/exec?task=docker", acl.New([]*acl.Policy{readJob}), "default", false},
		{"/v1/client/fs/logs/a1", acl.New([]*acl.Policy{readLogs}), "default", true},
		{"/v1/client/fs/logs/a1", acl.New([]*acl.Policy{readLogs}), "prod", false},
		{"/v1/client/fs/logs/a1", acl.New([]*acl.Policy{readJob}), "default", false},
		{"/v1/client/fs/cat/a1", acl.New([]*acl.Policy{readLogs}), "default", false},
		{"/v1/client/allocation/a1/stats", acl.New([]*acl.Policy{readJob}), "default", true},
		{"/v1/client/allocation/a1/stats", acl.New([]*acl.Policy{readLogs}), "default", false},
		{"/v1/client/stats", acl.New([]*acl.Policy{nodeRead}), "default", true},
		{"/v1/client/stats", acl.New([]*acl.Policy{readJob}), "default", false},
		{"/v1/client/gc", acl.New([]*acl.Policy{readJob, nodeRead, readLogs}), "default", false},
		{"/v1/client/gc", acl.ManagementACL, "default", true},
		{"/v1/client/fs/logs/a1", acl.DenyAll, "default", false},
	} {
		alloc := &structs.Allocation{Namespace: tc.ns, TaskGroup: "g", Job: &structs.Job{TaskGroups: []*structs.TaskGroup{{
			Name: "g", Tasks: []*structs.Task{{Name: "raw", Driver: "raw_exec"}, {Name: "docker", Driver: "docker"}}}}}}
		err := CheckClientRequest(tc.acl, httptest.NewRequest("GET", tc.path, nil), alloc)
		if (err == nil) != tc.ok {
			t.Errorf("%s in %s: %v, want allowed %t", tc.path, tc.ns, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, httpapi.ErrPermissionDenied) || !strings.HasPrefix(err.Error(), "Permission denied")) {
			t.Errorf("%s: %v", tc.path, err)
		}
	}
}

// A client keeps the servers' answer for its TTL (a refusal too), never
// past the token's expiry, and does not keep a failure to ask.
func TestTokenCache(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &tokenCache{ttl: 5 * time.Second, now: func() time.Time { return now }}
	calls := 0
	answer := func(a *acl.ACL, exp *time.Time, err error) func() (*acl.ACL, *time.Time, error) {
		return func() (*acl.ACL, *time.Time, error) { calls++; return a, exp, err }
	}
	if a, err := c.get("s1", answer(acl.ManagementACL, nil, nil)); err != nil || !a.IsManagement() {
		t.Fatal(a, err)
	}
	now = now.Add(4 * time.Second)
	c.get("s1", answer(acl.DenyAll, nil, nil))
	if calls != 1 {
		t.Fatalf("asked %d times within the TTL", calls)
	}
	now = now.Add(2 * time.Second)
	if a, _ := c.get("s1", answer(acl.DenyAll, nil, nil)); a.IsManagement() || calls != 2 {
		t.Fatalf("after the TTL: asked %d times, management %t", calls, a.IsManagement())
	}
	// A token the servers do not know is refused, and the refusal kept.
	for range 3 {
		if _, err := c.get("bad", answer(nil, nil, httpapi.ErrTokenNotFound)); !errors.Is(err, httpapi.ErrTokenNotFound) {
			t.Fatal(err)
		}
	}
	if calls != 3 {
		t.Fatalf("refusals asked %d times", calls)
	}
	// A failure to ask is not kept.
	for range 2 {
		c.get("s2", answer(nil, nil, errors.New("no servers")))
	}
	if calls != 5 {
		t.Fatalf("failures asked %d times", calls)
	}
	// Never past the expiry.
	exp := now.Add(time.Second)
	c.get("s3", answer(acl.ManagementACL, &exp, nil))
	now = now.Add(1500 * time.Millisecond)
	c.get("s3", answer(acl.DenyAll, nil, httpapi.ErrTokenNotFound))
	if calls != 7 {
		t.Fatalf("past the expiry: asked %d times", calls)
	}
}

func TestResolveRemote(t *testing.T) {
	if _, _, err := resolveRemote(&structs.ACLResolveResponse{}); !errors.Is(err, httpapi.ErrTokenNotFound) {
		t.Fatalf("not found: %v", err)
	}
	a, _, err := resolveRemote(&structs.ACLResolveResponse{Found: true, Policies: []*structs.ACLPolicy{
		{Name: "r", Rules: `namespace "default" { policy = "read" }`}, {Name: "broken", Rules: "namespace {"},
	}})
	if err != nil || !a.AllowNamespaceOp("default", acl.NamespaceCapabilityReadJob) || a.AllowNamespaceOp("default", acl.NamespaceCapabilityReadLogs) {
		t.Fatalf("policies: %v", err)
	}
}
