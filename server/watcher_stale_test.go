package server

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// holdWatcherStatusWrite holds the next deployment status update in Raft
// (the watcher's) until the returned function runs; it fails the test if
// none comes. An operator's verb issued meanwhile goes through: the hold
// is taken once.
func holdWatcherStatusWrite(t *testing.T, h *harness, cause func()) (release func()) {
	t.Helper()
	entered, done := h.raft.holdFirst(fsm.DeploymentStatusUpdateRequestType)
	var once bool
	release = func() {
		if !once {
			once = true
			close(done)
		}
	}
	t.Cleanup(release)
	cause()
	select {
	case <-entered:
	case <-time.After(testTimeout):
		t.Fatal("the watcher wrote no status update")
	}
	return release
}

// waitEntries waits until Raft has applied n entries of type mt.
func waitEntries(t *testing.T, h *harness, mt fsm.MessageType, n int) {
	t.Helper()
	for deadline := time.Now().Add(testTimeout); h.raft.entries(mt) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries of type %v applied, want %d", h.raft.entries(mt), mt, n)
		}
	}
}

func checkpointAtOne(u *structs.UpdateStrategy) {
	u.Checkpoints = []structs.Amount{{Value: 1}}
	u.CheckpointDelay = time.Hour
}

// An operator's pause that lands between the watcher's read of a
// deployment and its write stands: the watcher's checkpoint pause,
// decided on a running deployment, changes nothing, so the operator's
// pause is not turned into a delay that resumes by itself. (The watcher's
// write carried the status it had decided on over the operator's.)
func TestOperatorPauseBetweenWatcherReadAndWrite(t *testing.T) {
	h := newHarness(t)
	h.start()
	startPolicyRollout(t, h, checkpointAtOne)
	waitV1(h, 1, "the first v1 alloc")
	d := deploymentOf(h.store().Snapshot(), "web", 1)

	release := holdWatcherStatusWrite(t, h, func() { markNewHealthy(h) })
	if _, err := h.leader.PauseDeployment(h.ctx, d.ID, true); err != nil {
		t.Fatal(err)
	}
	n := h.raft.entries(fsm.DeploymentStatusUpdateRequestType)
	release()
	waitEntries(t, h, fsm.DeploymentStatusUpdateRequestType, n+1)
	h.idle()
	d, _ = h.store().Snapshot().DeploymentByID(d.ID)
	if d.Status != structs.DeploymentStatusPaused || d.StatusDescription != structs.DeploymentStatusDescriptionPaused || !d.ResumeAt.IsZero() {
		t.Fatalf("after the watcher's stale write: %s %q ResumeAt %v, want the operator's pause\n%s",
			d.Status, d.StatusDescription, d.ResumeAt, h.dump())
	}
}

// An operator's resume that lands between the watcher's read of a held
// deployment and its write (here, the wait reason a new leader writes
// first) stands, and the rollout goes on.
func TestOperatorResumeBetweenWatcherReadAndWrite(t *testing.T) {
	h := newHarness(t)
	h.start()
	startPolicyRollout(t, h, checkpointAtOne)
	waitV1(h, 1, "the first v1 alloc")
	markNewHealthy(h)
	var d *structs.Deployment
	h.waitFor("a pause at the checkpoint", func(s *state.Snapshot) bool {
		d = deploymentOf(s, "web", 1)
		return d.Status == structs.DeploymentStatusPaused && !d.ResumeAt.IsZero()
	})
	// Held with no leader: the next one first writes its wait reason.
	h.stop()
	if _, err := h.leader.PauseDeployment(context.Background(), d.ID, true); err != nil {
		t.Fatal(err)
	}
	release := holdWatcherStatusWrite(t, h, h.start)
	if _, err := h.leader.PauseDeployment(h.ctx, d.ID, false); err != nil {
		t.Fatal(err)
	}
	release()
	h.waitFor("the second v1 alloc", func(s *state.Snapshot) bool { return len(byVersion(allocsOf(s, "web"), 1)) == 2 })
}

// An automatic promotion (auto_promote) decided before an operator's
// pause and applied after it changes nothing: a paused deployment is not
// promoted. The resume promotes it.
func TestOperatorPauseBetweenAutoPromoteAndItsWrite(t *testing.T) {
	h := newHarness(t)
	h.start()
	startPolicyRollout(t, h, func(u *structs.UpdateStrategy) { u.Canary, u.AutoPromote = 1, true })
	waitV1(h, 1, "the canary")
	d := deploymentOf(h.store().Snapshot(), "web", 1)

	entered, done := h.raft.holdFirst(fsm.DeploymentPromoteRequestType)
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			close(done)
		}
	})
	markNewHealthy(h)
	select {
	case <-entered:
	case <-time.After(testTimeout):
		t.Fatal("the watcher did not promote")
	}
	if _, err := h.leader.PauseDeployment(h.ctx, d.ID, true); err != nil {
		t.Fatal(err)
	}
	close(done)
	waitEntries(t, h, fsm.DeploymentPromoteRequestType, 1)
	h.idle()
	d, _ = h.store().Snapshot().DeploymentByID(d.ID)
	if d.Status != structs.DeploymentStatusPaused || d.TaskGroups["web"].Promoted {
		t.Fatalf("after the watcher's stale promotion: %s %q promoted=%v, want paused and not promoted\n%s",
			d.Status, d.StatusDescription, d.TaskGroups["web"].Promoted, h.dump())
	}
	if _, err := h.leader.PauseDeployment(h.ctx, d.ID, false); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the promotion after the resume", func(s *state.Snapshot) bool {
		d = deploymentOf(s, "web", 1)
		return d.TaskGroups["web"].Promoted
	})
}
