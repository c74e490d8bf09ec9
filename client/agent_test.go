package client

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// The tests in this file run in a synctest bubble: time is fake, and
// synctest.Wait returns once every goroutine of the agent is blocked, so
// "after a while" means "after everything that could happen has".

const minHealthy = 2 * time.Second

// serviceAlloc is an allocation of a service job with one mock task that
// runs until stopped, in deployment dep, healthy by task states.
func serviceAlloc(id, node, dep string, version uint64) *structs.Allocation {
	tg := &structs.TaskGroup{
		Name: "web", Count: 1,
		Tasks:         []*structs.Task{{Name: "srv", Driver: "mock", KillTimeout: 3 * time.Second, Config: map[string]any{}}},
		RestartPolicy: &structs.RestartPolicy{Attempts: 0, Mode: structs.RestartPolicyModeFail},
	}
	tg.Update = structs.DefaultUpdateStrategy()
	tg.Update.HealthCheck = structs.UpdateHealthCheckTaskStates
	tg.Update.MinHealthyTime = minHealthy
	job := &structs.Job{ID: "shop", Name: "shop", Namespace: "default", Type: structs.JobTypeService,
		Region: "global", Version: version, TaskGroups: []*structs.TaskGroup{tg}}
	return &structs.Allocation{ID: id, Name: "shop.web[0]", Namespace: "default", NodeID: node, JobID: "shop",
		Job: job, TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun, DeploymentID: dep}
}

// startAgent runs an agent on srv with the mock driver; the returned
// function shuts it down (stopping its tasks) and waits.
func startAgent(t *testing.T, srv ServerAPI, dataDir string) (*Agent, func()) {
	t.Helper()
	a, err := New(Config{
		DataDir: dataDir, NodeName: "box", ServerAPI: srv, Logger: testLogger(t),
		Drivers: []drivers.Driver{mock.New(mock.Options{})}, CPUTotalMHz: 4000, MemoryTotalMB: 4096,
		Meta: map[string]string{"rack": "r1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Run(context.Background()); close(done) }()
	return a, func() { a.Shutdown(true); <-done }
}

func TestRegistersHeartbeatsAndRegistersAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		if r, b := srv.counts(); r != 1 || b != 0 {
			t.Fatalf("registers %d beats %d", r, b)
		}
		n := srv.nodes[a.NodeID()]
		if n.Name != "box" || n.Datacenter != "dc1" || n.Status != structs.NodeStatusReady ||
			n.Attributes["driver.mock"] != "1" || n.Attributes["cpu.totalcompute"] != "4000" ||
			n.NodeResources.Memory.MemoryMB != 4096 || n.Meta["rack"] != "r1" || n.NodePool != "default" {
			t.Fatalf("registered node %+v", n)
		}
		time.Sleep(srv.ttl)
		synctest.Wait()
		if _, b := srv.counts(); b < 1 || b > 2 {
			t.Fatalf("%d heartbeats in one TTL, want 1 or 2", b)
		}
		srv.forget(a.NodeID())
		time.Sleep(srv.ttl)
		synctest.Wait()
		if r, _ := srv.counts(); r != 2 {
			t.Fatalf("registers %d after the servers forgot the node", r)
		}
	})
}

func TestKeepsTryingWhileServersAreDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		srv.setDown(true)
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if a.Registered() {
			t.Fatal("registered with no server up")
		}
		srv.setDown(false)
		time.Sleep(MaxRetryInterval)
		synctest.Wait()
		if !a.Registered() {
			t.Fatal("did not register once a server came back")
		}
		srv.put(serviceAlloc("a1", a.NodeID(), "", 0))
		// Heartbeats fail for a while: nothing is lost.
		srv.setDown(true)
		time.Sleep(time.Minute)
		srv.setDown(false)
		time.Sleep(MaxRetryInterval)
		synctest.Wait()
		if s := srv.alloc("a1").ClientStatus; s != structs.AllocClientStatusRunning {
			t.Fatalf("alloc %s after the outage", s)
		}
		// Silent for longer than the TTL, the node may have been marked
		// down: it registered again to be ready.
		if r, _ := srv.counts(); r != 2 {
			t.Fatalf("registered %d times, want 2", r)
		}
	})
}

func TestRunsAllocAndReportsHealthAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		srv.put(serviceAlloc("a1", a.NodeID(), "dep-1", 0))
		synctest.Wait()
		if n := srv.reports(); n != 0 {
			t.Fatalf("%d reports of a start before the report window passed", n)
		}
		time.Sleep(reportWindow)
		synctest.Wait()
		// Received, set up and started: one report.
		if n := srv.reports(); n != 1 {
			t.Fatalf("%d reports of a start, want 1", n)
		}
		got := srv.alloc("a1")
		if got.ClientStatus != structs.AllocClientStatusRunning || got.TaskStates["srv"].State != structs.TaskStateRunning {
			t.Fatalf("alloc %s %+v", got.ClientStatus, got.TaskStates)
		}
		if !healthUndecided(got) {
			t.Fatal("health decided before min_healthy_time")
		}
		time.Sleep(minHealthy)
		synctest.Wait()
		got = srv.alloc("a1")
		if !got.IsHealthy() {
			t.Fatalf("not healthy after min_healthy_time: %+v", got.DeploymentStatus)
		}
		// The report left the moment health was decided.
		srv.mu.Lock()
		var at time.Time
		for _, u := range srv.updates {
			for _, al := range u.allocs {
				if al.DeploymentStatus != nil && at.IsZero() {
					at = u.at
				}
			}
		}
		srv.mu.Unlock()
		if !at.Equal(got.DeploymentStatus.Timestamp) {
			t.Fatalf("health decided at %v, reported at %v", got.DeploymentStatus.Timestamp, at)
		}
	})
}

func TestStopsAndCollectsAllocs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		data := t.TempDir()
		a, stop := startAgent(t, srv, data)
		defer stop()
		synctest.Wait()
		srv.put(serviceAlloc("stopme", a.NodeID(), "", 0))
		srv.put(serviceAlloc("dropme", a.NodeID(), "", 0))
		srv.put(serviceAlloc("notmine", "other-node", "", 0))
		time.Sleep(reportWindow)
		synctest.Wait()
		for _, id := range []string{"stopme", "dropme"} {
			if s := srv.alloc(id).ClientStatus; s != structs.AllocClientStatusRunning {
				t.Fatalf("%s is %s", id, s)
			}
		}
		if _, err := os.Stat(filepath.Join(data, "alloc", "notmine")); !os.IsNotExist(err) {
			t.Fatal("ran another node's alloc")
		}
		srv.change("stopme", func(al *structs.Allocation) {
			al.DesiredStatus, al.DesiredDescription = structs.AllocDesiredStatusStop, structs.AllocNotNeeded
		})
		srv.remove("dropme")
		time.Sleep(reportWindow)
		synctest.Wait()
		got := srv.alloc("stopme")
		st := got.TaskStates["srv"]
		if got.ClientStatus != structs.AllocClientStatusComplete || st.State != structs.TaskStateDead || st.Failed {
			t.Fatalf("stopped alloc: %s %+v", got.ClientStatus, st)
		}
		if _, err := os.Stat(filepath.Join(data, "alloc", "dropme")); !os.IsNotExist(err) {
			t.Fatalf("dropped alloc's dir still there: %v", err)
		}
		if _, err := os.Stat(filepath.Join(data, "alloc", "stopme", allocFile)); err != nil {
			t.Fatalf("stopped alloc's dir removed before the servers dropped it: %v", err)
		}
		a.mu.Lock()
		n := len(a.allocs)
		a.mu.Unlock()
		if n != 1 {
			t.Fatalf("%d allocs tracked, want 1", n)
		}
	})
}

func TestInPlaceUpdateKeepsTaskAndReportsNewHealth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		srv.put(serviceAlloc("a1", a.NodeID(), "dep-1", 0))
		time.Sleep(minHealthy)
		synctest.Wait()
		if !srv.alloc("a1").IsHealthy() {
			t.Fatal("not healthy in the first deployment")
		}
		// Version 1 is an in-place update: same alloc, new job, new
		// deployment whose health is not known yet. The task has run for
		// longer than min_healthy_time: healthy in the new deployment at
		// once, stamped now, not with the old deployment's decision.
		time.Sleep(5 * time.Second)
		updatedAt := time.Now()
		srv.change("a1", func(al *structs.Allocation) {
			al.Job = serviceAlloc("a1", a.NodeID(), "dep-2", 1).Job
			al.DeploymentID, al.DeploymentStatus = "dep-2", nil
		})
		synctest.Wait()
		got := srv.alloc("a1")
		if !got.IsHealthy() || !got.DeploymentStatus.Timestamp.Equal(updatedAt) {
			t.Fatalf("health in the new deployment: %+v, want healthy at %v", got.DeploymentStatus, updatedAt)
		}
		st := got.TaskStates["srv"]
		started := 0
		for _, e := range st.Events {
			if e.Type == structs.TaskStarted {
				started++
			}
		}
		if started != 1 || st.Restarts != 0 || st.State != structs.TaskStateRunning {
			t.Fatalf("task restarted by an in-place update: started %d, restarts %d, %s", started, st.Restarts, st.State)
		}
		a.mu.Lock()
		v := a.allocs["a1"].alloc.JobVersion()
		a.mu.Unlock()
		if v != 1 {
			t.Fatalf("recorded job version %d", v)
		}
	})
}

func TestUnknownDriverIsReportedFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		al := serviceAlloc("a1", a.NodeID(), "", 0)
		al.Job.TaskGroups[0].Tasks[0].Driver = "docker"
		srv.put(al)
		synctest.Wait()
		got := srv.alloc("a1")
		if got.ClientStatus != structs.AllocClientStatusFailed || got.ClientDescription == "" {
			t.Fatalf("alloc %s %q", got.ClientStatus, got.ClientDescription)
		}
	})
}

// An alloc of a deployment that fails before any health tracker runs is
// reported unhealthy, so that the deployment does not wait on it.
func TestAllocFailedInSetupIsUnhealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		al := serviceAlloc("a1", a.NodeID(), "d1", 0)
		al.Job.TaskGroups[0].Tasks[0].Name = "../escape" // cannot name a directory
		srv.put(al)
		synctest.Wait()
		got := srv.alloc("a1")
		if got.ClientStatus != structs.AllocClientStatusFailed {
			t.Fatalf("alloc %s %q", got.ClientStatus, got.ClientDescription)
		}
		if got.DeploymentStatus == nil || got.DeploymentStatus.Healthy == nil || *got.DeploymentStatus.Healthy ||
			got.DeploymentStatus.Timestamp.IsZero() {
			t.Fatalf("deployment status %+v, want unhealthy with a time", got.DeploymentStatus)
		}
	})
}

func TestFetchesOnlyAllocsTheServersChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		srv.put(serviceAlloc("a1", a.NodeID(), "", 0))
		srv.put(serviceAlloc("a2", a.NodeID(), "", 0))
		time.Sleep(time.Second)
		synctest.Wait()
		// Running and, after min_healthy_time, healthy: the client's own
		// reports wake its query but fetch nothing.
		time.Sleep(2 * minHealthy)
		synctest.Wait()
		if s := srv.alloc("a2").ClientStatus; s != structs.AllocClientStatusRunning {
			t.Fatalf("a2 is %s", s)
		}
		reports := srv.reports()
		if reports == 0 {
			t.Fatal("no status report")
		}
		fetched := 0
		for _, ids := range srv.fetched() {
			fetched += len(ids)
		}
		if fetched != 2 {
			t.Fatalf("fetched %v after %d reports, want each alloc once", srv.fetched(), reports)
		}

		// The servers stop a2: only a2 is fetched again.
		before := len(srv.fetched())
		srv.change("a2", func(x *structs.Allocation) { x.DesiredStatus = structs.AllocDesiredStatusStop })
		time.Sleep(5 * time.Second)
		synctest.Wait()
		gets := srv.fetched()[before:]
		if len(gets) != 1 || len(gets[0]) != 1 || gets[0][0] != "a2" {
			t.Fatalf("fetched %v after a2 changed, want [[a2]]", gets)
		}
		// It said it holds the job of the allocs it runs, once: the
		// servers need not send it again.
		if held, want := srv.heldJobs()[before:], srv.alloc("a2").Job.Ref(); len(held) != 1 || !slices.Equal(held[0], []structs.JobRef{want}) {
			t.Fatalf("held %v when fetching a2, want [[%v]]", held, want)
		}
		if first := srv.heldJobs()[0]; len(first) != 0 {
			t.Fatalf("held %v before running anything", first)
		}
		if s := srv.alloc("a2").ClientStatus; s != structs.AllocClientStatusComplete {
			t.Fatalf("a2 is %s after its stop", s)
		}
		if s := srv.alloc("a1").ClientStatus; s != structs.AllocClientStatusRunning {
			t.Fatalf("a1 is %s", s)
		}

		// A removed alloc is collected without any fetch.
		before = len(srv.fetched())
		srv.remove("a2")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if gets := srv.fetched()[before:]; len(gets) != 0 {
			t.Fatalf("fetched %v after a removal", gets)
		}
		a.mu.Lock()
		_, still := a.allocs["a2"]
		a.mu.Unlock()
		if still {
			t.Fatal("a2 not collected")
		}
	})
}

// Every five to ten minutes of heartbeats that got through, the agent
// asks its ServerAPI to pick a server again; not while none gets through.
func TestRebalancesServersEveryFewMinutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		_, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		rebalances := func() int {
			srv.mu.Lock()
			defer srv.mu.Unlock()
			return srv.rebalances
		}
		time.Sleep(RebalanceMin - srv.ttl)
		synctest.Wait()
		if n := rebalances(); n != 0 {
			t.Fatalf("%d rebalances before RebalanceMin", n)
		}
		time.Sleep(RebalanceMin + 2*srv.ttl)
		synctest.Wait()
		// One, or two if both pauses were within seconds of RebalanceMin.
		before := rebalances()
		if before < 1 || before > 2 {
			t.Fatalf("%d rebalances in the first 10 minutes, want 1", before)
		}
		srv.setDown(true)
		time.Sleep(4 * RebalanceMin)
		synctest.Wait()
		if n := rebalances(); n != before {
			t.Fatalf("%d rebalances while no heartbeat got through", n-before)
		}
	})
}
