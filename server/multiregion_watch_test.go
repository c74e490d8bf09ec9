package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/deployment/stateview"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// fakeRegions is a federation of regions, each its own fake Raft (its own
// state), read by each other directly; a region may be cut off.
type fakeRegions struct {
	mu      sync.Mutex
	regions map[string]*fakeRaft
	cut     map[string]bool
	reads   int
}

var errCutOff = errors.New("region unreachable: no server of it answered")

func (f *fakeRegions) JobDeployments(ctx context.Context, region, namespace, jobID string) ([]*structs.Deployment, error) {
	f.mu.Lock()
	f.reads++
	r, cut := f.regions[region], f.cut[region]
	f.mu.Unlock()
	if cut || r == nil {
		return nil, errCutOff
	}
	return r.fsm.State().Snapshot().DeploymentsByJob(namespace, jobID)
}

func (f *fakeRegions) setCut(region string, cut bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut[region] = cut
}

// mrJob is region's copy of a multi-region job rolling east then west.
func mrJob(region, onFailure string, autoRevert bool) *structs.Job {
	j := testJob("web", 1, 100)
	j.Region = region
	j.Multiregion = &structs.Multiregion{
		Strategy: &structs.MultiregionStrategy{MaxParallel: 1, OnFailure: onFailure},
		Regions:  []*structs.MultiregionRegion{{Name: "east", Count: 1}, {Name: "west", Count: 1}},
	}
	j.TaskGroups[0].Update.AutoRevert = autoRevert
	return j
}

// mrSetup registers the job in each region and its deployment of the
// latest version, east running and west pending.
func mrSetup(t *testing.T, clock *fakeClock, onFailure string, versions int) *fakeRegions {
	t.Helper()
	ctx := context.Background()
	f := &fakeRegions{regions: map[string]*fakeRaft{}, cut: map[string]bool{}}
	for _, region := range []string{"east", "west"} {
		r := newFakeRaft(hclog.NewNullLogger())
		f.regions[region] = r
		var stored *structs.Job
		for v := range versions {
			job := mrJob(region, onFailure, true)
			job.Meta = map[string]string{"v": string(rune('a' + v))}
			_, _, err := r.Apply(ctx, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
			must(t, err)
			stored, _ = r.fsm.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
			if v < versions-1 {
				_, _, err = r.Apply(ctx, fsm.JobStabilityRequestType, &structs.JobStabilityRequest{
					Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: stored.Version, Stable: true})
				must(t, err)
			}
		}
		status, desc := structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning
		if region == "west" {
			status, desc = structs.DeploymentStatusPending, structs.DeploymentStatusDescriptionPendingForPeer
		}
		d := &structs.Deployment{ID: "d-" + region, Namespace: structs.DefaultNamespace, JobID: "web",
			JobVersion: stored.Version, JobCreateIndex: stored.CreateIndex, Status: status, StatusDescription: desc,
			IsMultiregion: true,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1, AutoRevert: true,
				ProgressDeadline: 10 * time.Minute}}}
		_, _, err := r.Apply(ctx, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
			Job: stored, Deployment: d, UpdatedAt: clock.Now().UnixNano()})
		must(t, err)
	}
	return f
}

func (f *fakeRegions) watcher(region string, clock *fakeClock) *MultiregionWatcher {
	r := f.regions[region]
	n := 0
	return &MultiregionWatcher{Region: region, Reader: f, Raft: r, State: r.fsm.State, Clock: watcherClock{clock},
		NewID: func() string { n++; return region + "-eval-" + string(rune('0'+n)) }}
}

func (f *fakeRegions) pass(region string, w *MultiregionWatcher) bool {
	return w.Pass(context.Background(), stateview.New(f.regions[region].fsm.State), memdb.NewWatchSet())
}

func (f *fakeRegions) deployment(t *testing.T, region string) *structs.Deployment {
	t.Helper()
	d, err := f.regions[region].fsm.State().Snapshot().DeploymentByID("d-" + region)
	must(t, err)
	return d
}

func (f *fakeRegions) setStatus(t *testing.T, region, status, desc string) {
	t.Helper()
	_, _, err := f.regions[region].Apply(context.Background(), fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d-" + region, Status: status, StatusDescription: desc}})
	must(t, err)
}

func wantStatus(t *testing.T, d *structs.Deployment, status, desc string) {
	t.Helper()
	if d.Status != status || desc != "" && d.StatusDescription != desc {
		t.Fatalf("deployment %s: %s %q, want %s %q", d.ID, d.Status, d.StatusDescription, status, desc)
	}
}

// TestMultiregionWatcherRollsInOrder: west waits while east runs, starts
// (with an evaluation, and its progress deadline from the start) once
// east is blocked; both turn successful, and stable, once both are
// blocked.
func TestMultiregionWatcherRollsInOrder(t *testing.T) {
	clock := newFakeClock()
	f := mrSetup(t, clock, structs.MultiregionOnFailureFailAll, 1)
	east, west := f.watcher("east", clock), f.watcher("west", clock)

	if !f.pass("west", west) {
		t.Fatal("west's pass saw no active multi-region deployment")
	}
	wantStatus(t, f.deployment(t, "west"), structs.DeploymentStatusPending, structs.DeploymentStatusDescriptionPendingForPeer)
	f.pass("east", east)
	wantStatus(t, f.deployment(t, "east"), structs.DeploymentStatusRunning, "")

	clock.Advance(time.Hour)
	f.setStatus(t, "east", structs.DeploymentStatusBlocked, structs.DeploymentStatusDescriptionBlocked)
	f.pass("west", west)
	d := f.deployment(t, "west")
	wantStatus(t, d, structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning)
	if got, want := d.TaskGroups["web"].RequireProgressBy, clock.Now().Add(10*time.Minute); !got.Equal(want) {
		t.Fatalf("west's progress deadline %v, want %v (from its start)", got, want)
	}
	evals, _ := f.regions["west"].fsm.State().Snapshot().EvalsByJob(structs.DefaultNamespace, "web")
	if len(evals) != 1 || evals[0].DeploymentID != "d-west" {
		t.Fatalf("west's start created evals %v, want one for d-west", evals)
	}
	// East waits for west.
	f.pass("east", east)
	wantStatus(t, f.deployment(t, "east"), structs.DeploymentStatusBlocked, structs.DeploymentStatusDescriptionBlocked)

	f.setStatus(t, "west", structs.DeploymentStatusBlocked, structs.DeploymentStatusDescriptionBlocked)
	f.pass("east", east)
	f.pass("west", west)
	for _, region := range []string{"east", "west"} {
		wantStatus(t, f.deployment(t, region), structs.DeploymentStatusSuccessful, structs.DeploymentStatusDescriptionSuccessful)
		job, _ := f.regions[region].fsm.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
		if !job.Stable {
			t.Fatalf("%s: job version %d not stable after success", region, job.Version)
		}
	}
	if f.pass("east", east) {
		t.Fatal("a pass after the rollout still sees an active multi-region deployment")
	}
}

// TestMultiregionWatcherUnreachable: a region that cannot be read is
// named in the waiting deployment's description with the time it became
// unreachable; a new leader (a new watcher) keeps that time from state;
// once the region answers again the rollout goes on.
func TestMultiregionWatcherUnreachable(t *testing.T) {
	clock := newFakeClock()
	f := mrSetup(t, clock, "", 1)
	f.setCut("east", true)
	west := f.watcher("west", clock)
	cutAt := clock.Now()
	f.pass("west", west)
	want := deployment.UnreachableReason("east", cutAt)
	wantStatus(t, f.deployment(t, "west"), structs.DeploymentStatusPending, want)
	if !strings.Contains(want, `waiting for region "east" (unreachable since 12:00:00)`) {
		t.Fatalf("description %q", want)
	}

	clock.Advance(3 * time.Minute)
	f.pass("west", west)
	again := f.watcher("west", clock) // a new leader: nothing in memory
	f.pass("west", again)
	wantStatus(t, f.deployment(t, "west"), structs.DeploymentStatusPending, want)

	f.setCut("east", false)
	f.setStatus(t, "east", structs.DeploymentStatusBlocked, structs.DeploymentStatusDescriptionBlocked)
	f.pass("west", again)
	wantStatus(t, f.deployment(t, "west"), structs.DeploymentStatusRunning, "")
}

// TestMultiregionWatcherFailAll: east's failure fails west's pending
// deployment (nothing to revert: it never started), and a running west
// reverts to its stable version.
func TestMultiregionWatcherFailAll(t *testing.T) {
	clock := newFakeClock()
	f := mrSetup(t, clock, structs.MultiregionOnFailureFailAll, 2)
	west := f.watcher("west", clock)
	f.setStatus(t, "east", structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedAllocations)
	f.pass("west", west)
	wantStatus(t, f.deployment(t, "west"), structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedByPeer)
	job, _ := f.regions["west"].fsm.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	if job.Version != 1 {
		t.Fatalf("pending west registered version %d; a region that never started reverts nothing", job.Version)
	}

	// A running region reverts (auto_revert).
	f = mrSetup(t, clock, structs.MultiregionOnFailureFailAll, 2)
	east := f.watcher("east", clock)
	f.setStatus(t, "west", structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedAllocations)
	f.pass("east", east)
	wantStatus(t, f.deployment(t, "east"), structs.DeploymentStatusFailed,
		structs.DeploymentStatusDescriptionRollback(structs.DeploymentStatusDescriptionFailedByPeer, 0))
	job, _ = f.regions["east"].fsm.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	if job.Version != 2 || job.RevertOf == nil || *job.RevertOf != 0 {
		t.Fatalf("east after the peer's failure: version %d revert of %v, want 2 reverting 0", job.Version, job.RevertOf)
	}
}

// TestMultiregionWatcherRun: the loop on a fake clock reads the other
// region every Poll and starts west once east is blocked; it stops with
// its context.
func TestMultiregionWatcherRun(t *testing.T) {
	clock := newFakeClock()
	f := mrSetup(t, clock, structs.MultiregionOnFailureFailAll, 1)
	west := f.watcher("west", clock)
	west.Poll = 5 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		west.Run(ctx)
	}()
	waitUntil(t, "a poll armed", func() bool { return len(clock.pending()) == 1 })
	f.setStatus(t, "east", structs.DeploymentStatusBlocked, structs.DeploymentStatusDescriptionBlocked)
	// Nothing changed in west's state: only the poll reads east again.
	clock.Advance(5 * time.Second)
	waitUntil(t, "west started", func() bool {
		return f.deployment(t, "west").Status == structs.DeploymentStatusRunning
	})
	cancel()
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatal("Run did not return after its context ended")
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestUnblockDeployment: deployment unblock makes a blocked multi-region
// deployment successful and its version stable; others are refused.
func TestUnblockDeployment(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	job := mrJob("west", "", false)
	_, _, err := h.raft.Apply(ctx, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	must(t, err)
	stored, _ := h.store().Snapshot().JobByID(structs.DefaultNamespace, "web")
	d := &structs.Deployment{ID: "db", Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: stored.Version,
		Status: structs.DeploymentStatusBlocked, StatusDescription: structs.DeploymentStatusDescriptionBlocked, IsMultiregion: true,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}}
	_, _, err = h.raft.Apply(ctx, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Job: stored, Deployment: d})
	must(t, err)

	if _, err := h.leader.UnblockDeployment(ctx, "nope"); !errors.Is(err, ErrDeploymentNotFound) {
		t.Fatalf("unknown deployment: %v", err)
	}
	if _, err := h.leader.UnblockDeployment(ctx, "db"); err != nil {
		t.Fatal(err)
	}
	got, _ := h.store().Snapshot().DeploymentByID("db")
	wantStatus(t, got, structs.DeploymentStatusSuccessful, structs.DeploymentStatusDescriptionSuccessful)
	j, _ := h.store().Snapshot().JobByID(structs.DefaultNamespace, "web")
	if !j.Stable {
		t.Fatal("job version not stable after unblock")
	}
	_, err = h.leader.UnblockDeployment(ctx, "db")
	if !errors.Is(err, deployment.ErrUnblockTerminal) || err.Error() != "can't unblock terminal deployment" {
		t.Fatalf("unblock of a successful deployment: %v", err)
	}
}
