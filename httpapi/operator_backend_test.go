package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/structs"
)

// operatorBackend adds the leader's operator verbs to fakeBackend: a real
// server.Leader writing through the fake backend's Apply into the same
// real FSM. The verbs need no running term.
type operatorBackend struct {
	*fakeBackend
	OperatorBackend
}

var _ OperatorBackend = (*server.Leader)(nil)

// newOperatorTestAPI serves the API over a backend with the operator verbs.
func newOperatorTestAPI(t *testing.T) (*fakeBackend, *httptest.Server) {
	t.Helper()
	fb := newFakeBackend()
	l, err := server.New(server.Config{Raft: fb, State: fb.fsm.State, Logger: hclog.NewNullLogger(), NumWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(&operatorBackend{fb, l}, nil).Handler())
	t.Cleanup(srv.Close)
	return fb, srv
}

// apply writes one entry to the backend's FSM or fails the test.
func (b *fakeBackend) mustApply(t *testing.T, typ fsm.MessageType, req any) uint64 {
	t.Helper()
	_, idx, err := b.Apply(t.Context(), typ, req)
	if err != nil {
		t.Fatalf("applying %s: %v", typ, err)
	}
	return idx
}

// testNodeFor is a ready node with raw_exec and plenty of room.
func testNodeFor(id string) *structs.Node {
	return &structs.Node{
		ID: id, Name: id, Datacenter: "dc1", NodePool: structs.DefaultNodePool,
		Attributes: map[string]string{"kernel.name": "linux", "unique.network.ip-address": "127.0.0.1"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 8000},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100000},
		},
		Drivers:               map[string]*structs.DriverInfo{"raw_exec": {Detected: true, Healthy: true}},
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusReady,
	}
}

// placeCanaryDeployment registers webJob and places one canary alloc of
// it under a running deployment "dep-1" that requires promotion.
func placeCanaryDeployment(t *testing.T, b *fakeBackend, srvURL string) (*structs.Job, *structs.Allocation) {
	t.Helper()
	if code, body, _ := do(t, "PUT", srvURL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	b.mustApply(t, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: testNodeFor("n1")})
	job, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	dep := &structs.Deployment{
		ID: "dep-1", Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: job.Version,
		JobCreateIndex: job.CreateIndex, JobModifyIndex: job.JobModifyIndex,
		Status: structs.DeploymentStatusRunning, StatusDescription: structs.DeploymentStatusDescriptionRunningNeedsPromotion,
		TaskGroups: map[string]*structs.DeploymentState{"g": {
			DesiredCanaries: 1, DesiredTotal: 1, ProgressDeadline: 10 * time.Minute,
		}},
	}
	alloc := &structs.Allocation{
		ID: "alloc-1", Namespace: structs.DefaultNamespace, Name: structs.AllocName("web", "g", 0), NodeID: "n1",
		JobID: "web", TaskGroup: "g", DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus: structs.AllocClientStatusPending, DeploymentID: "dep-1",
		DeploymentStatus: &structs.AllocDeploymentStatus{Canary: true},
	}
	b.mustApply(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: "eval-0", Job: job, AllocsPlaced: []*structs.Allocation{alloc}, Deployment: dep,
		UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
	})
	return job, alloc
}

// decode unmarshals body into v or fails the test.
func decode(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("decoding %q: %v", body, err)
	}
}
