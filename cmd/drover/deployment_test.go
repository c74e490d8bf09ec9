package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// cliBackend is a one-server leader in memory: a real FSM written through
// an in-memory log, with the real server.Leader's operator verbs.
type cliBackend struct {
	httpapi.OperatorBackend
	leader *server.Leader
	mu     sync.Mutex
	fsm    *fsm.FSM
	index  uint64
}

func (b *cliBackend) State() *state.Store { return b.fsm.State() }
func (b *cliBackend) Apply(_ context.Context, t fsm.MessageType, req any) (any, uint64, error) {
	data, err := fsm.Encode(t, req)
	if err != nil {
		return nil, 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.index++
	resp := b.fsm.Apply(&raft.Log{Index: b.index, Type: raft.LogCommand, Data: data})
	if err, ok := resp.(error); ok {
		return nil, b.index, err
	}
	return resp, b.index, nil
}
func (b *cliBackend) IsLeader() bool                  { return true }
func (b *cliBackend) Leader() (string, string)        { return "127.0.0.1:4647", "self" }
func (b *cliBackend) LeaderHTTPAddr() (string, error) { return "", nil }
func (b *cliBackend) LastContact() time.Duration      { return 0 }
func (b *cliBackend) Self() *structs.AgentSelf        { return &structs.AgentSelf{} }
func (b *cliBackend) RaftConfiguration() (*structs.RaftConfiguration, error) {
	return &structs.RaftConfiguration{}, nil
}
func (b *cliBackend) Join(context.Context, *structs.ServerJoinRequest) (*structs.ServerJoinResponse, error) {
	return &structs.ServerJoinResponse{}, nil
}

// Two deployment IDs that share the prefix "0b23".
const (
	depA = "0b23b149-0000-4000-8000-000000000001"
	depB = "0b23c0de-0000-4000-8000-000000000002"
)

const cliJobHCL = `job "web" {
  update {
    canary       = 1
    max_parallel = 1
  }
  group "web" {
    count = 1
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
    }
  }
}
`

// newCLIServer serves the real HTTP API over cliBackend and returns it with
// its URL and the path of cliJobHCL on disk.
func newCLIServer(t *testing.T) (*cliBackend, string, string) {
	t.Helper()
	b := &cliBackend{fsm: fsm.New(nil)}
	l, err := server.New(server.Config{Raft: b, State: b.fsm.State, Logger: hclog.NewNullLogger(), NumWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b.leader, b.OperatorBackend = l, l
	srv := httptest.NewServer(httpapi.New(b, nil).Handler())
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "web.hcl")
	if err := os.WriteFile(path, []byte(cliJobHCL), 0o600); err != nil {
		t.Fatal(err)
	}
	return b, srv.URL, path
}

func (b *cliBackend) must(t *testing.T, typ fsm.MessageType, req any) {
	t.Helper()
	if _, _, err := b.Apply(context.Background(), typ, req); err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
}

// registerWeb registers cliJobHCL and returns the stored job.
func (b *cliBackend) registerWeb(t *testing.T) *structs.Job {
	t.Helper()
	job, _, err := jobspec.Parse("web.hcl", []byte(cliJobHCL), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.leader.RegisterJob(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	stored, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	return stored
}

// placeCanary stores deployment id of the job's current version with one
// placed canary alloc allocID.
func (b *cliBackend) placeCanary(t *testing.T, job *structs.Job, id, allocID string) {
	t.Helper()
	b.must(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: "e-" + id, Job: job,
		AllocsPlaced: []*structs.Allocation{{
			ID: allocID, Namespace: structs.DefaultNamespace, Name: structs.AllocName("web", "web", 0), NodeID: "n1",
			JobID: "web", TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning, DeploymentID: id,
			DeploymentStatus: &structs.AllocDeploymentStatus{Canary: true},
		}},
		Deployment: &structs.Deployment{
			ID: id, Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: job.Version,
			JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusRunning,
			StatusDescription: structs.DeploymentStatusDescriptionRunningNeedsPromotion,
			TaskGroups:        map[string]*structs.DeploymentState{"web": {DesiredCanaries: 1, DesiredTotal: 1, AutoRevert: true}},
		},
		UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
	})
}

// wantCLI runs the CLI and checks the exit code and that the output has
// every text.
func wantCLI(t *testing.T, code int, texts []string, args ...string) string {
	t.Helper()
	got, out, errOut := runCLI(t, "", args...)
	all := out + errOut
	if got != code {
		t.Fatalf("drover %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, out, errOut)
	}
	for _, s := range texts {
		if !strings.Contains(all, s) {
			t.Fatalf("drover %s: output lacks %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), s, out, errOut)
		}
	}
	return out
}

func TestDeploymentCommands(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	job := b.registerWeb(t)
	b.placeCanary(t, job, depA, "alloc-a")

	out := wantCLI(t, 0, []string{"ID", "Job ID", "Job Version", "Status", "Description", "0b23b149", "web", "requires manual promotion"},
		"deployment", "list", "-address", addr)
	if strings.Contains(out, depA) {
		t.Fatalf("list without -verbose shows the full ID:\n%s", out)
	}
	wantCLI(t, 0, []string{depA}, "deployment", "list", "-verbose", "-address", addr)
	out = wantCLI(t, 0, nil, "deployment", "status", "-address", addr, "0b23")
	for _, line := range []string{
		"ID          = 0b23b149", "Job ID      = web", "Job Version = 0", "Status      = running",
		"Description = Deployment is running but requires manual promotion", "Deployed",
	} {
		if !strings.Contains(out, line) {
			t.Fatalf("status lacks %q:\n%s", line, out)
		}
	}
	header := []string{"Task Group", "Auto Revert", "Promoted", "Desired", "Canaries", "Placed", "Healthy", "Unhealthy", "Progress Deadline"}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := lines[len(lines)-2]; !strings.HasPrefix(got, strings.Join(header[:1], "")) || strings.Join(strings.Fields(got), " ") != strings.Join(header, " ") {
		t.Fatalf("group table header %q", got)
	}
	if got := strings.Fields(lines[len(lines)-1]); strings.Join(got, " ") != "web true false 1 1 1 0 0 N/A" {
		t.Fatalf("group row %q", got)
	}
	wantCLI(t, 0, []string{`"ID": "` + depA + `"`}, "deployment", "status", "-json", "-address", addr, depA)
	wantCLI(t, 1, []string{`No deployment(s) with prefix or id "ffff" found`}, "deployment", "status", "-address", addr, "ffff")

	// Refusals carry the leader's message.
	wantCLI(t, 1, []string{"Error promoting deployment", `task group "web" has 0/1 healthy allocations`},
		"deployment", "promote", "-address", addr, "0b23")
	wantCLI(t, 1, []string{`deployment has no such task group: "db"`},
		"deployment", "promote", "-group", "db", "-address", addr, "0b23")

	wantCLI(t, 0, []string{`Deployment "0b23b149" paused`, "Status      = paused"}, "deployment", "pause", "-address", addr, "0b23")
	wantCLI(t, 1, []string{"can't promote paused deployment"}, "job", "promote", "-address", addr, "web")
	// resume follows the rollout live (e2e tests show it); -detach returns.
	wantCLI(t, 0, []string{`Deployment "0b23b149" resumed`}, "deployment", "resume", "-detach", "-address", addr, "0b23")
	if d, _ := b.State().Snapshot().DeploymentByID(depA); d.Status != structs.DeploymentStatusRunning {
		t.Fatalf("resumed deployment is %s", d.Status)
	}

	if _, err := b.SetAllocHealth(context.Background(), depA, []string{"alloc-a"}, nil); err != nil {
		t.Fatal(err)
	}
	out = wantCLI(t, 0, []string{`Deployment "0b23b149" promoted for task groups web`, "Evaluation ID: "},
		"job", "promote", "-group", "web", "-detach", "-address", addr, "web")
	if strings.Contains(out, "Status      =") {
		t.Fatalf("-detach showed the deployment:\n%s", out)
	}
	if d, _ := b.State().Snapshot().DeploymentByID(depA); !d.TaskGroups["web"].Promoted {
		t.Fatal("not promoted")
	}
	wantCLI(t, 0, []string{`Deployment "0b23b149" failed`, "Status      = failed", "Deployment marked as failed"},
		"deployment", "fail", "-address", addr, depA)
	wantCLI(t, 1, []string{"Error failing deployment", "can't fail terminal deployment"}, "deployment", "fail", "-address", addr, depA)
	wantCLI(t, 1, []string{"can't promote terminal deployment"}, "deployment", "promote", "-address", addr, depA)
	wantCLI(t, 1, []string{"can't pause terminal deployment"}, "deployment", "pause", "-address", addr, depA)
	wantCLI(t, 1, []string{"can't resume terminal deployment"}, "deployment", "resume", "-address", addr, depA)

	// A second deployment makes the prefix ambiguous.
	b.placeCanary(t, job, depB, "alloc-b")
	wantCLI(t, 1, []string{"Prefix matched multiple deployments", "0b23b149", "0b23c0de"}, "deployment", "status", "-address", addr, "0b23")
	out = wantCLI(t, 0, []string{"0b23b149", "0b23c0de"}, "job", "deployments", "-address", addr, "web")
	if strings.Index(out, "0b23c0de") > strings.Index(out, "0b23b149") {
		t.Fatalf("job deployments not newest first:\n%s", out)
	}
	wantCLI(t, 0, []string{"ID          = 0b23c0de", "Status      = running"}, "job", "deployments", "-latest", "-address", addr, "web")
	wantCLI(t, 1, []string{`No job(s) with prefix or id "nope" found`}, "job", "deployments", "-address", addr, "nope")
}

func TestDeploymentCommandsUseDroverAddr(t *testing.T) {
	_, addr, _ := newCLIServer(t)
	t.Setenv("DROVER_ADDR", addr)
	t.Setenv("NOMAD_ADDR", "http://127.0.0.1:1")
	wantCLI(t, 0, []string{"No deployments found"}, "deployment", "list")
}
