package deployment

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

// TestWatcherMultiregionBlocks: on the fake clock, a multi-region
// deployment whose groups are done turns blocked (Nomad's description), not
// successful, and its job version is not marked stable; blocked, it is
// left to the regions' rollout: no deadline fails it, however long it
// waits.
func TestWatcherMultiregionBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 3, rpb: 10 * time.Minute})
		f.deps["d1"].IsMultiregion = true
		stop := startWatcher(t, f)
		defer stop()
		synctest.Wait()
		wantWrites(t, f)

		time.Sleep(time.Minute)
		f.setHealth("a2", true, time.Now())
		f.setHealth("a3", true, time.Now())
		synctest.Wait()
		wantWrites(t, f, "status blocked: Deployment is complete but waiting for peer region")
		if f.jobs["web"][1].Stable {
			t.Error("version 1 marked stable while the other regions roll")
		}

		time.Sleep(time.Hour)
		synctest.Wait()
		wantWrites(t, f, "status blocked: Deployment is complete but waiting for peer region")
	})
}

// TestWatcherMultiregionPendingWaits: a pending deployment places nothing
// and is not failed by its progress deadline: the watcher leaves it to the
// regions' rollout.
func TestWatcherMultiregionPendingWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 2, rpb: time.Minute})
		f.deps["d1"].IsMultiregion = true
		f.deps["d1"].Status = structs.DeploymentStatusPending
		f.deps["d1"].StatusDescription = structs.DeploymentStatusDescriptionPendingForPeer
		stop := startWatcher(t, f)
		defer stop()
		time.Sleep(time.Hour)
		synctest.Wait()
		wantWrites(t, f)
	})
}
