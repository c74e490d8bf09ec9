package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// TestUpgradeOldFollowerInstallsNewLeadersSnapshot: during a rolling
// upgrade, a follower of the previous release (upgrade/PREVIOUS) that
// fell behind is sent a snapshot by a leader of this build, and restores
// it. Two servers of this build keep only a few log entries past a
// snapshot (raft_trailing_logs); the old server is stopped, writes go on,
// the leader takes a snapshot (compacting its log), and the old server,
// started again, can only catch up from that snapshot. It installs it
// (this build's store always holds tables the previous release does not
// read, the "default" namespace's at least: a snapshot written for this
// build alone would fail there with "unknown record tag"), and then holds
// the writes made while it was down.
func TestUpgradeOldFollowerInstallsNewLeadersSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release and runs three servers")
	}
	prev := upgradePreviousBin(t)
	begin := time.Now()
	dir := t.TempDir()
	type addrs struct{ name, http, raft string }
	var as []addrs
	var joins []string
	for i := range 3 {
		a := addrs{fmt.Sprintf("s%d", i+1), loopback.Addr(t), loopback.Addr(t)}
		as = append(as, a)
		joins = append(joins, fmt.Sprintf("%q", a.http))
	}
	var procs []*upgradeProc
	for i, a := range as {
		cfg := upgradeServerConfig(a.name, filepath.Join(dir, a.name), a.http, a.raft, joins)
		bin := prev
		if i < 2 {
			bin = droverBin
			cfg = strings.Replace(cfg, "server {\n", "server {\n  raft_trailing_logs = 2\n", 1)
		}
		path := filepath.Join(dir, a.name+".hcl")
		writeFile(t, path, cfg)
		procs = append(procs, upgradeStart(t, a.name, bin, a.http, "-config", path))
	}
	upgradeWaitHealthy(t, procs)
	old := procs[2]
	c := procs[0].client()
	put := func(c *apiclient.Client, path string) error {
		_, err := c.VarPut(upgradeCtx(t), "default", &structs.Variable{Namespace: "default", Path: path,
			Items: structs.VariableItems{"k": path}}, false, 0)
		return err
	}
	eventually(t, 30*time.Second, "a first write", func() error { return put(c, "snap/before") })

	old.stop()
	// A leader of this build (the old server may have led).
	var leader *upgradeProc
	eventually(t, 30*time.Second, "a leader of this build", func() error {
		l, err := c.Status().Leader(upgradeCtx(t))
		if err != nil {
			return err
		}
		for i, a := range as[:2] {
			if a.raft == l {
				leader = procs[i]
				return nil
			}
		}
		return fmt.Errorf("leader %q", l)
	})
	const writes = 20
	for i := range writes {
		if err := put(leader.client(), fmt.Sprintf("snap/w%d", i)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	// A snapshot, written while the old server is in the configuration:
	// the leader's log keeps two entries past it.
	if _, err := upgradeGetSnapshot(leader.httpAddr, ""); err != nil {
		t.Fatalf("snapshot on the leader %s: %v", leader.name, err)
	}

	old.run(prev)
	oc := old.client()
	eventually(t, 30*time.Second, old.name+" caught up through the snapshot", func() error {
		for _, path := range []string{"snap/before", fmt.Sprintf("snap/w%d", writes-1)} {
			if _, err := oc.VarGet(upgradeCtx(t), path, &apiclient.QueryOptions{AllowStale: true}); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		return nil
	})
	old.mu.Lock()
	logs := old.logs.String()
	old.mu.Unlock()
	if !strings.Contains(logs, "Installed remote snapshot") {
		t.Errorf("%s caught up without installing the leader's snapshot", old.name)
	}
	if strings.Contains(logs, "unknown record tag") || strings.Contains(logs, "failed to restore snapshot") {
		t.Errorf("%s failed to restore a snapshot", old.name)
	}
	// A write after the install: the old follower's log then reaches past
	// the snapshot (until one, its last log index is the one it had
	// before, and autopilot counts it as behind).
	eventually(t, 30*time.Second, "a write after the install", func() error { return put(c, "snap/after") })
	upgradeWaitHealthy(t, procs)
	t.Logf("the old follower installed the new leader's snapshot; %s in all", time.Since(begin).Round(time.Millisecond))
}
