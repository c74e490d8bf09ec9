package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// revertBackend is a fakeBackend with the operator verbs: RevertJob
// records the versions it was asked to register again; the others are
// not served.
type revertBackend struct {
	*fakeBackend
	mu       sync.Mutex
	reverted []uint64
}

var errNotServed = errors.New("not served by this test backend")

func (b *revertBackend) RevertJob(_ context.Context, _, _ string, version uint64, _ *uint64) (*structs.JobRevertResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reverted = append(b.reverted, version)
	return &structs.JobRevertResponse{JobVersion: version}, nil
}

func (b *revertBackend) PromoteDeployment(context.Context, string, []string, bool) (*structs.DeploymentUpdateResponse, error) {
	return nil, errNotServed
}

func (b *revertBackend) FailDeployment(context.Context, string) (*structs.DeploymentUpdateResponse, error) {
	return nil, errNotServed
}

func (b *revertBackend) PauseDeployment(context.Context, string, bool) (*structs.DeploymentUpdateResponse, error) {
	return nil, errNotServed
}

func (b *revertBackend) SetAllocHealth(context.Context, string, []string, []string) (*structs.DeploymentUpdateResponse, error) {
	return nil, errNotServed
}

func (b *revertBackend) SetJobStability(context.Context, string, string, uint64, bool) (*structs.JobStabilityResponse, error) {
	return nil, errNotServed
}

// volJob is the registration envelope of job "vol" in namespace dev,
// whose group mounts the client host volume source (read-only or not).
func volJob(source string, readOnly bool) string {
	return fmt.Sprintf(`{"Job":{"ID":"vol","Name":"vol","Namespace":"dev","Type":"service","Datacenters":["dc1"],
 "TaskGroups":[{"Name":"g","Count":1,"Volumes":{"d":{"Name":"d","Type":"host","Source":%q,"ReadOnly":%t}},
  "Tasks":[{"Name":"t","Driver":"raw_exec","Config":{"command":"/bin/true"},"VolumeMounts":[{"Volume":"d","Destination":"/d"}]}]}]}}`, source, readOnly)
}

// The host_volume rules of a token decide which client host volumes the
// jobs it registers, plans or reverts to may mount, as Nomad's: a
// read-write volume needs mount-readwrite, a read-only one mount-readonly
// or mount-readwrite; a namespace's write grants neither. A refused
// registration leaves nothing registered.
func TestHostVolumeRulesOnJobVersions(t *testing.T) {
	b := &revertBackend{fakeBackend: newFakeBackend()}
	api := New(b, nil, WithACL(ACLConfig{Enabled: true}))
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	f := &aclFixture{srv: srv, secrets: map[string]string{}}
	b.mustApply(t, fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "dev-write", Rules: `namespace "dev" {
  policy = "write"
  variables {
    path "*" { capabilities = ["write", "read", "list", "destroy"] }
  }
}`},
		{Name: "data-read", Rules: `host_volume "data" { policy = "read" }`},
		{Name: "data-glob", Rules: `host_volume "da*" { policy = "write" }` + "\n" + `host_volume "data" { policy = "read" }`},
	}})
	b.mustApply(t, fsm.NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{{Name: "dev"}}})
	for name, policies := range map[string][]string{
		"mgmt": nil, "dev": {"dev-write"}, "ro": {"dev-write", "data-read"}, "glob": {"dev-write", "data-glob"},
	} {
		typ := structs.ACLTokenTypeClient
		if name == "mgmt" {
			typ = structs.ACLTokenTypeManagement
		}
		secret := structs.GenerateUUID()
		f.secrets[name] = secret
		b.mustApply(t, fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{
			AccessorID: "acc-" + name, SecretHash: structs.HashSecret(secret), Name: name, Type: typ, Policies: policies,
		}}})
	}
	version := func() int {
		t.Helper()
		j, err := b.State().Snapshot().JobByID("dev", "vol")
		if err != nil {
			t.Fatal(err)
		}
		if j == nil {
			return -1
		}
		return int(j.Version)
	}
	for _, c := range []struct {
		name, who, method, path, body string
		want                          int
		contains                      string
		version                       int // the job's version after
	}{
		{"write alone: read-write", "dev", "PUT", "/v1/jobs", volJob("data", false), 403, `Permission denied: group "g" volume "d" mounts host volume "data", which needs mount-readwrite`, -1},
		{"write alone: read-only", "dev", "PUT", "/v1/jobs", volJob("data", true), 403, "needs mount-readonly or mount-readwrite", -1},
		{"write alone: through /v1/job/vol", "dev", "PUT", "/v1/job/vol", volJob("data", false), 403, "Permission denied", -1},
		{"write alone: plan", "dev", "PUT", "/v1/job/vol/plan", volJob("data", true), 403, "Permission denied", -1},
		{"read: read-write", "ro", "PUT", "/v1/jobs", volJob("data", false), 403, "needs mount-readwrite", -1},
		{"read: plan read-write", "ro", "PUT", "/v1/job/vol/plan", volJob("data", false), 403, "needs mount-readwrite", -1},
		{"read: another volume", "ro", "PUT", "/v1/jobs", volJob("logs", true), 403, `host volume "logs"`, -1},
		{"read: read-only", "ro", "PUT", "/v1/jobs", volJob("data", true), 200, "EvalID", 0},
		{"read: plan read-only", "ro", "PUT", "/v1/job/vol/plan", volJob("data", true), 200, "", 0},
		{"the exact rule wins over a wider glob", "glob", "PUT", "/v1/jobs", volJob("data", false), 403, "needs mount-readwrite", 0},
		{"a glob grants what it matches", "glob", "PUT", "/v1/jobs", volJob("dazzle", false), 200, "EvalID", 1},
		{"management: read-write", "mgmt", "PUT", "/v1/jobs", volJob("data", false), 200, "EvalID", 2},
		{"read: revert to the read-write version", "ro", "PUT", "/v1/job/vol/revert?namespace=dev", `{"JobID":"vol","JobVersion":2}`, 403, "needs mount-readwrite", 2},
		{"read: revert to the read-only version", "ro", "PUT", "/v1/job/vol/revert?namespace=dev", `{"JobID":"vol","JobVersion":0}`, 200, "", 2},
		{"management: revert to the read-write version", "mgmt", "PUT", "/v1/job/vol/revert?namespace=dev", `{"JobID":"vol","JobVersion":2}`, 200, "", 2},
	} {
		code, body := f.do(t, c.who, c.method, c.path, c.body)
		if code != c.want || !strings.Contains(body, c.contains) {
			t.Errorf("%s: %s %s: %d %s, want %d with %q", c.name, c.method, c.path, code, body, c.want, c.contains)
		}
		if v := version(); v != c.version {
			t.Errorf("%s: the job is at version %d, want %d", c.name, v, c.version)
		}
	}
	if fmt.Sprint(b.reverted) != "[0 2]" {
		t.Errorf("reverts that reached the backend: %v, want [0 2]", b.reverted)
	}

	// ACLs off: nothing is checked.
	ob := newFakeBackend()
	ob.mustApply(t, fsm.NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{{Name: "dev"}}})
	open := httptest.NewServer(New(ob, nil).Handler())
	t.Cleanup(open.Close)
	g := &aclFixture{srv: open, secrets: map[string]string{}}
	if code, body := g.do(t, "", "PUT", "/v1/jobs", volJob("data", false)); code != 200 {
		t.Errorf("ACLs off: %d %s", code, body)
	}
}

// A job whose ID holds a "/" does not read, with its identity, the
// variables of the job its ID's first segment names: job "web/g"'s
// identity is refused nomad/jobs/web/g (job web's group g) and below.
func TestWorkloadIdentityOfJobWithSlash(t *testing.T) {
	f := varACLFixture(t)
	job := statetestJob("web/g")
	job.TaskGroups[0].Name = "t"
	if _, _, err := f.b.Apply(context.Background(), fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: "default", JobID: job.ID, Status: structs.EvalStatusPending}}); err != nil {
		t.Fatal(err)
	}
	stored, _ := f.b.State().Snapshot().JobByID("default", job.ID)
	id := structs.GenerateUUID()
	if _, _, err := f.b.Apply(context.Background(), fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Job: stored, AllocsPlaced: []*structs.Allocation{{
		ID: id, Namespace: "default", JobID: job.ID, TaskGroup: "t", NodeID: "node1", Name: "web/g.t[0]",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
	}}}); err != nil {
		t.Fatal(err)
	}
	code, body := f.do(t, "node1", "PUT", "/v1/internal/alloc/"+id+"/identity", `{"Tasks":["t"]}`)
	var resp structs.AllocIdentityResponse
	if err := json.Unmarshal([]byte(body), &resp); code != 200 || err != nil || len(resp.Identities) != 1 {
		t.Fatalf("identity: %d %s", code, body)
	}
	f.secrets["slash"] = resp.Identities[0].JWT
	for _, c := range []struct {
		path string
		want int
	}{
		{"/v1/var/nomad/jobs/web/g", 403},   // job web's group g, and job "web/g"'s path as strings
		{"/v1/var/nomad/jobs/web/g/t", 403}, // job web's group g's task t
		{"/v1/var/nomad/jobs/web", 403},
		{"/v1/var/nomad/jobs", 200},
		{"/v1/job/web", 403},
		{"/v1/job/web%2Fg", 403},
	} {
		if code, got := f.do(t, "slash", "GET", c.path, ""); code != c.want {
			t.Errorf("job web/g's identity GET %s: %d %s, want %d", c.path, code, got, c.want)
		}
	}
	code, body = f.do(t, "slash", "GET", "/v1/vars?prefix=nomad/", "")
	if code != 200 || strings.Count(body, `"Path"`) != 1 || !strings.Contains(body, `"Path":"nomad/jobs"`) {
		t.Fatalf("job web/g's identity lists: %d %s", code, body)
	}
}
