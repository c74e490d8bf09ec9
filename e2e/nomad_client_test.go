package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/jobspec"
	leadersvc "github.com/droverhq/drover/server"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// The official Nomad Go client against a drover server: one server in
// this process (the real FSM, server.Leader with its workers, plan applier
// and deployment watcher, and the real HTTP API on 127.0.0.1), its log kept
// in memory, and a real client agent running the mock driver over HTTP.

// memLog is a one-server replicated log in memory: each entry is encoded
// as on the wire and applied to the real FSM at the next index.
type memLog struct {
	mu    sync.Mutex
	fsm   *fsm.FSM
	index uint64
}

func (m *memLog) Apply(ctx context.Context, t fsm.MessageType, req any) (any, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	data, err := fsm.Encode(t, req)
	if err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.index++
	resp := m.fsm.Apply(&raft.Log{Index: m.index, Type: raft.LogCommand, Data: data})
	if err, ok := resp.(error); ok {
		return nil, m.index, err
	}
	return resp, m.index, nil
}

// memBackend is the HTTP API's backend: the log, and the leader's client
// and operator services.
type memBackend struct {
	*memLog
	httpapi.ClientBackend
	httpapi.OperatorBackend
	addr string
}

func (b *memBackend) State() *state.Store             { return b.fsm.State() }
func (b *memBackend) IsLeader() bool                  { return true }
func (b *memBackend) Leader() (string, string)        { return b.addr, "s1" }
func (b *memBackend) LeaderHTTPAddr() (string, error) { return b.addr, nil }
func (b *memBackend) LastContact() time.Duration      { return 0 }
func (b *memBackend) Self() *structs.AgentSelf        { return &structs.AgentSelf{} }
func (b *memBackend) RaftConfiguration() (*structs.RaftConfiguration, error) {
	return &structs.RaftConfiguration{Servers: []*structs.RaftServer{{ID: "s1", Node: "s1", Address: b.addr, Leader: true, Voter: true, RaftProtocol: "3"}}}, nil
}
func (b *memBackend) Join(context.Context, *structs.ServerJoinRequest) (*structs.ServerJoinResponse, error) {
	return nil, errors.New("single server")
}

// startInProcessCluster runs the server and one client with the mock
// driver, and returns a Nomad API client for the server.
func startInProcessCluster(t *testing.T) *nomad.Client {
	t.Helper()
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: tLogWriter{t}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := &memLog{fsm: fsm.New(logger)}
	events := stream.NewBuffer(1024)
	log.fsm.SetEvents(events)
	leader, err := leadersvc.New(leadersvc.Config{Raft: log, State: log.fsm.State, Logger: logger, NumWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	b := &memBackend{memLog: log, ClientBackend: leader, OperatorBackend: leader, addr: ln.Addr().String()}
	srv := &http.Server{Handler: httpapi.New(b, logger, httpapi.WithEventStream(httpapi.EventStreamConfig{Buffer: events})).Handler(),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); leader.Run(ctx) }()

	agent, err := client.New(client.Config{
		DataDir: t.TempDir(), NodeName: "c1", Servers: []string{ln.Addr().String()},
		Drivers: []drivers.Driver{mock.New(mock.Options{})}, Logger: logger,
		CPUTotalMHz: 8000, MemoryTotalMB: 8192,
	})
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() { defer wg.Done(); agent.Run(ctx) }()
	t.Cleanup(func() {
		agent.Shutdown(true)
		cancel()
		_ = srv.Close()
		wg.Wait()
	})

	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

type tLogWriter struct{ t testing.TB }

func (w tLogWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func ptr[T any](v T) *T { return &v }

// nomadJob is a service job of count mock tasks, rolled with canary
// canaries; runFor tells versions apart.
func nomadJob(count, canary int, runFor string, autoRevert bool) *nomad.Job {
	job := nomad.NewServiceJob("web", "web", "global", 50)
	job.Datacenters = []string{"dc1"}
	job.Update = &nomad.UpdateStrategy{
		MaxParallel: ptr(1), Canary: ptr(canary), AutoRevert: ptr(autoRevert),
		HealthCheck: ptr("task_states"), MinHealthyTime: ptr(50 * time.Millisecond),
		HealthyDeadline: ptr(time.Minute), ProgressDeadline: ptr(2 * time.Minute),
	}
	task := nomad.NewTask("app", "mock").SetConfig("run_for", runFor)
	task.Resources = &nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)}
	group := nomad.NewTaskGroup("web", count).AddTask(task)
	job.AddTaskGroup(group)
	return job
}

// waitDeployment follows the job's latest deployment with blocking
// queries until ok holds, and returns it.
func waitDeployment(t *testing.T, nc *nomad.Client, what string, ok func(*nomad.Deployment) bool) *nomad.Deployment {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var index uint64
	var last *nomad.Deployment
	for time.Now().Before(deadline) {
		d, meta, err := nc.Jobs().LatestDeployment("web", &nomad.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if meta.LastIndex < index {
			t.Fatalf("%s: blocking query went back from index %d to %d", what, index, meta.LastIndex)
		}
		index = meta.LastIndex
		last = d
		if d != nil && ok(d) {
			return d
		}
	}
	t.Fatalf("timed out waiting for %s; last deployment %+v", what, last)
	return nil
}

// healthyCanaries is the number of the deployment's canaries reported
// healthy.
func healthyCanaries(t *testing.T, nc *nomad.Client, d *nomad.Deployment) int {
	t.Helper()
	stubs, _, err := nc.Deployments().Allocations(d.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range stubs {
		if a.DeploymentStatus != nil && a.DeploymentStatus.Canary && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy {
			n++
		}
	}
	return n
}

func TestNomadGoClient(t *testing.T) {
	nc := startInProcessCluster(t)

	// The first version rolls out and becomes stable.
	reg, _, err := nc.Jobs().Register(nomadJob(2, 0, "1h", false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if reg.EvalID == "" || reg.JobModifyIndex == 0 {
		t.Fatalf("register answer %+v", reg)
	}
	d0 := waitDeployment(t, nc, "v0 successful", func(d *nomad.Deployment) bool {
		return d.JobVersion == 0 && d.Status == nomad.DeploymentStatusSuccessful
	})
	if s := d0.TaskGroups["web"]; s.DesiredTotal != 2 || s.HealthyAllocs != 2 || s.PlacedAllocs != 2 {
		t.Fatalf("v0 deployment state %+v", s)
	}
	deps, meta, err := nc.Deployments().List(nil)
	if err != nil || len(deps) != 1 || deps[0].ID != d0.ID || meta.LastIndex == 0 {
		t.Fatalf("deployments list: %v %+v", err, deps)
	}
	stubs, _, err := nc.Deployments().Allocations(d0.ID, nil)
	if err != nil || len(stubs) != 2 {
		t.Fatalf("deployment allocations: %v %d", err, len(stubs))
	}
	for _, a := range stubs {
		if a.ClientStatus != "running" || a.JobID != "web" || a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil || !*a.DeploymentStatus.Healthy {
			t.Fatalf("alloc stub %+v", a)
		}
	}

	// Plan a canary version, then run it and promote its healthy canary.
	plan, _, err := nc.Jobs().Plan(nomadJob(2, 1, "2h", false), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := plan.Annotations.DesiredTGUpdates["web"]; u == nil || u.Canary != 1 || u.Ignore != 2 || plan.JobModifyIndex != reg.JobModifyIndex {
		t.Fatalf("plan %+v / %+v", plan, plan.Annotations.DesiredTGUpdates["web"])
	}
	if _, _, err := nc.Jobs().Register(nomadJob(2, 1, "2h", false), nil); err != nil {
		t.Fatal(err)
	}
	d1 := waitDeployment(t, nc, "v1 canary healthy", func(d *nomad.Deployment) bool {
		return d.JobVersion == 1 && len(d.TaskGroups["web"].PlacedCanaries) == 1 && healthyCanaries(t, nc, d) == 1
	})
	if d1.StatusDescription != "Deployment is running but requires manual promotion" {
		t.Fatalf("v1 description %q", d1.StatusDescription)
	}
	up, _, err := nc.Deployments().PromoteAll(d1.ID, nil)
	if err != nil || up.EvalID == "" || up.DeploymentModifyIndex == 0 {
		t.Fatalf("promote: %v %+v", err, up)
	}
	waitDeployment(t, nc, "v1 successful", func(d *nomad.Deployment) bool {
		return d.ID == d1.ID && d.Status == nomad.DeploymentStatusSuccessful && d.TaskGroups["web"].Promoted
	})

	// A third version with auto_revert, failed by hand: v1 comes back.
	if _, _, err := nc.Jobs().Register(nomadJob(2, 1, "3h", true), nil); err != nil {
		t.Fatal(err)
	}
	d2 := waitDeployment(t, nc, "v2 canary placed", func(d *nomad.Deployment) bool {
		return d.JobVersion == 2 && len(d.TaskGroups["web"].PlacedCanaries) == 1
	})
	_, _, err = nc.Deployments().Fail(d2.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	failed, _, err := nc.Deployments().Info(d2.ID, nil)
	if err != nil || failed.Status != nomad.DeploymentStatusFailed ||
		failed.StatusDescription != "Deployment marked as failed - rolling back to job version 1" {
		t.Fatalf("failed deployment: %v %+v", err, failed)
	}
	if _, _, err := nc.Deployments().Fail(d2.ID, nil); err == nil {
		t.Fatal("failing a failed deployment was accepted")
	}
	// The revert is version 3, rolled out by its own deployment; once that
	// succeeds, version 3 is stable too.
	waitDeployment(t, nc, "v3 (revert) successful", func(d *nomad.Deployment) bool {
		return d.JobVersion == 3 && d.Status == nomad.DeploymentStatusSuccessful
	})
	versions, _, _, err := nc.Jobs().Versions("web", false, nil)
	if err != nil || len(versions) != 4 {
		t.Fatalf("versions: %v, %d", err, len(versions))
	}
	want := []struct {
		version uint64
		stable  bool
		runFor  string
	}{{3, true, "2h"}, {2, false, "3h"}, {1, true, "2h"}, {0, true, "1h"}}
	for i, w := range want {
		v := versions[i]
		if *v.Version != w.version || *v.Stable != w.stable || fmt.Sprint(v.TaskGroups[0].Tasks[0].Config["run_for"]) != w.runFor {
			t.Fatalf("version %d: got v%d stable=%t run_for=%v", i, *v.Version, *v.Stable, v.TaskGroups[0].Tasks[0].Config["run_for"])
		}
	}

	// Parse on the server.
	parsed, err := nc.Jobs().ParseHCL(`job "p" {
  group "g" {
    task "t" {
      driver = "mock"
      config { run_for = "1m" }
    }
  }
}`, true)
	if err != nil || *parsed.ID != "p" || *parsed.TaskGroups[0].Count != 1 || *parsed.Type != "service" {
		t.Fatalf("parse: %v %+v", err, parsed)
	}

	rolloutPoliciesThroughNomad(t, nc)
}

// policiesJob is a job that writes every rollout policy of part C (but
// zones); runFor tells versions apart. Its checkpoint pauses a rollout
// until resumed (the delay is an hour).
func policiesJob(t *testing.T, runFor string) *structs.Job {
	t.Helper()
	src := fmt.Sprintf(`job "policies" {
  datacenters = ["dc1"]
  update {
    max_parallel      = "50%%"
    max_surge         = 1
    first_batch       = 1
    unhealthy_first   = true
    max_unhealthy     = "50%%"
    max_failed        = 1
    on_failure        = "pause"
    checkpoints       = ["50%%"]
    checkpoint_delay  = "1h"
    health_check      = "task_states"
    min_healthy_time  = "50ms"
    healthy_deadline  = "1m"
    progress_deadline = "2m"
  }
  group "web" {
    count = 2
    task "app" {
      driver = "mock"
      config {
        run_for = %q
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`, runFor)
	job, _, err := jobspec.Parse("policies.hcl", []byte(src), jobspec.Options{})
	if err != nil {
		t.Fatalf("parsing the policies job: %v", err)
	}
	return job
}

// rawKeys reads endpoint as JSON and checks that the object at path (keys
// into nested objects) has every key in want.
func rawKeys(t *testing.T, nc *nomad.Client, endpoint string, path []string, want ...string) {
	t.Helper()
	var obj map[string]any
	if _, err := nc.Raw().Query(endpoint, &obj, nil); err != nil {
		t.Fatalf("%s: %v", endpoint, err)
	}
	for _, k := range path {
		next, ok := obj[k].(map[string]any)
		if !ok {
			if list, isList := obj[k].([]any); isList && len(list) > 0 {
				next, ok = list[0].(map[string]any)
			}
		}
		if !ok {
			t.Fatalf("%s: no object at %v in %s", endpoint, path, jsonString(obj))
		}
		obj = next
	}
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			t.Errorf("%s: %v has no %s: %s", endpoint, path, k, jsonString(obj))
		}
	}
}

// rolloutPoliciesThroughNomad registers, through the Nomad client's raw
// writes, a job that sets every new update field, and reads it, its
// versions and its deployments (paused at a checkpoint, then a revert's)
// with the Nomad client's own types, which must decode them; the
// deployment is resumed with the Nomad client.
func rolloutPoliciesThroughNomad(t *testing.T, nc *nomad.Client) {
	t.Helper()
	register := func(job *structs.Job) {
		t.Helper()
		var resp nomad.JobRegisterResponse
		if _, err := nc.Raw().Write("/v1/jobs", map[string]any{"Job": job}, &resp, nil); err != nil || resp.EvalID == "" {
			t.Fatalf("registering %s: %v %+v", job.ID, err, resp)
		}
	}
	latest := func(what string, ok func(*nomad.Deployment) bool) *nomad.Deployment {
		t.Helper()
		var last *nomad.Deployment
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			d, _, err := nc.Jobs().LatestDeployment("policies", nil)
			if err != nil {
				t.Fatalf("%s: decoding the deployment: %v", what, err)
			}
			if last = d; d != nil && ok(d) {
				return d
			}
		}
		t.Fatalf("timed out waiting for %s; last deployment %+v", what, last)
		return nil
	}

	register(policiesJob(t, "1h"))
	latest("policies v0 successful", func(d *nomad.Deployment) bool {
		return d.JobVersion == 0 && d.Status == nomad.DeploymentStatusSuccessful
	})
	job, _, err := nc.Jobs().Info("policies", nil)
	if err != nil {
		t.Fatalf("decoding the policies job: %v", err)
	}
	if u := job.TaskGroups[0].Update; u == nil || *u.MaxParallel != 1 || *u.MinHealthyTime != 50*time.Millisecond {
		t.Fatalf("the policies job's update block as Nomad reads it: %+v", u)
	}
	rawKeys(t, nc, "/v1/job/policies", []string{"TaskGroups", "Update"}, "MaxParallel", "MaxParallelPercent",
		"MaxSurge", "FirstBatch", "UnhealthyFirst", "MaxUnhealthy", "MaxFailed", "OnFailure", "Checkpoints", "CheckpointDelay")

	// Version 1 pauses at its checkpoint: one of two healthy.
	register(policiesJob(t, "2h"))
	d := latest("policies v1 at its checkpoint", func(d *nomad.Deployment) bool {
		return d.JobVersion == 1 && d.Status == nomad.DeploymentStatusPaused
	})
	if want := "Deployment paused at checkpoint 50% of group web (1/2 healthy)"; d.StatusDescription != want {
		t.Errorf("v1 paused with %q, want %q", d.StatusDescription, want)
	}
	if s := d.TaskGroups["web"]; s == nil || s.HealthyAllocs != 1 || s.DesiredTotal != 2 {
		t.Errorf("v1 at its checkpoint, as Nomad reads it: %+v", s)
	}
	if info, _, err := nc.Deployments().Info(d.ID, nil); err != nil || info.ID != d.ID {
		t.Fatalf("deployment info: %v", err)
	}
	if list, _, err := nc.Deployments().List(nil); err != nil || len(list) == 0 {
		t.Fatalf("deployments list: %v", err)
	}
	rawKeys(t, nc, "/v1/deployment/"+d.ID, nil, "PausedAt", "ResumeAt")
	rawKeys(t, nc, "/v1/deployment/"+d.ID, []string{"TaskGroups", "web"}, "OnFailure", "CheckpointsReached", "FailuresAtPause")
	if _, _, err := nc.Deployments().Pause(d.ID, false, nil); err != nil {
		t.Fatalf("resuming with the Nomad client: %v", err)
	}
	latest("policies v1 successful", func(d *nomad.Deployment) bool {
		return d.JobVersion == 1 && d.Status == nomad.DeploymentStatusSuccessful
	})

	// A revert to version 0: its deployment records which version it
	// restores.
	if _, _, err := nc.Jobs().Revert("policies", 0, nil, nil, "", ""); err != nil {
		t.Fatalf("revert: %v", err)
	}
	d = latest("policies v2 (revert) successful", func(d *nomad.Deployment) bool {
		return d.JobVersion == 2 && d.Status == nomad.DeploymentStatusSuccessful
	})
	rawKeys(t, nc, "/v1/deployment/"+d.ID, nil, "RevertOf", "PausedAt", "ResumeAt")
	rawKeys(t, nc, "/v1/job/policies", nil, "RevertOf")
	versions, _, _, err := nc.Jobs().Versions("policies", false, nil)
	if err != nil || len(versions) != 3 {
		t.Fatalf("decoding the policies job's versions: %v, %d", err, len(versions))
	}
}
