package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// The recording of the previous release's Raft log and snapshot, which
// fsm's TestPreviousReleaseLog applies with this build's state machine.

var upgradeRecord = flag.String("upgrade.record", "",
	"record the previous release's log and snapshot (fsm/testdata/previous) into this directory")

// upgradeRecording is what TestUpgradeRecordPrevious writes to
// log.json.gz: the Raft log of a server of the previous release, whose
// state snapshot.tar.gz holds at SnapshotIndex.
type upgradeRecording struct {
	Commit        string
	SnapshotIndex uint64
	Entries       []upgradeEntry
}

type upgradeEntry struct {
	Index uint64
	Term  uint64
	Type  raft.LogType
	Data  []byte
}

// TestUpgradeRecordPrevious records, with -upgrade.record DIR, what a
// server of the previous release (upgrade/PREVIOUS) writes: one server
// with a client, ACLs on, runs a rollout with a canary promoted, a
// variable, ACL policies and tokens, a scale, a node's eligibility, the
// autopilot configuration and a job stopped; DIR receives its whole Raft
// log (log.json.gz) and a snapshot of its state (snapshot.tar.gz), which
// fsm's TestPreviousReleaseLog applies with this build's state machine.
func TestUpgradeRecordPrevious(t *testing.T) {
	if *upgradeRecord == "" {
		t.Skip("records fsm/testdata/previous: go test ./e2e -run TestUpgradeRecordPrevious -upgrade.record ../fsm/testdata/previous")
	}
	out, err := filepath.Abs(*upgradeRecord)
	if err != nil {
		t.Fatal(err)
	}
	bin := upgradePreviousBin(t)
	dir := t.TempDir()
	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	p := upgradeStart(t, "rec", bin, httpAddr, withRawExec(t, []string{"-server", "-client", "-bootstrap-expect", "1",
		"-data-dir", dir, "-http-addr", httpAddr, "-raft-addr", raftAddr, "-node", "rec", "-acl-enabled",
		"-servers", httpAddr, "-log-level", "debug"})...)
	c := p.client()
	var boot *structs.ACLToken
	eventually(t, 60*time.Second, "the ACL bootstrap", func() error {
		boot, err = c.ACLBootstrap(upgradeCtx(t), "")
		return err
	})
	c.SetToken(boot.SecretID)
	bg := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("policy", c.ACLPolicyApply(bg, &structs.ACLPolicy{Name: "readonly", Rules: `namespace "default" { policy = "read" }`}))
	tok, err := c.ACLTokenCreate(bg, &structs.ACLToken{Name: "ci", Type: "client", Policies: []string{"readonly"}})
	must("token", err)
	must("token delete", c.ACLTokenDelete(bg, tok.AccessorID))
	_, err = c.ACLTokenCreate(bg, &structs.ACLToken{Name: "kept", Type: "client", Policies: []string{"readonly"}})
	must("token", err)
	_, err = c.VarPut(bg, "default", &structs.Variable{Namespace: "default", Path: "app/config",
		Items: structs.VariableItems{"greeting": "hello"}}, false, 0)
	must("variable", err)

	var nodeID string
	eventually(t, 60*time.Second, "the client ready", func() error {
		nodes, _, err := c.Nodes().List(upgradeCtx(t), nil)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if n.Status == structs.NodeStatusReady {
				nodeID = n.ID
				return nil
			}
		}
		return fmt.Errorf("%d nodes, none ready", len(nodes))
	})
	_, err = c.Nodes().ToggleEligibility(bg, nodeID, false)
	must("ineligible", err)
	_, err = c.Nodes().ToggleEligibility(bg, nodeID, true)
	must("eligible", err)

	spec := rolloutSpec{ID: "rec", Count: 2, Version: "0",
		Update: "      max_parallel     = 1\n      min_healthy_time = \"1s\"\n      canary           = 1"}
	spec.run(t, c)
	waitRollout(t, c, "rec", 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	spec.Version = "1"
	spec.run(t, c)
	var d *structs.Deployment
	eventually(t, 60*time.Second, "the canary healthy", func() error {
		d, err = latestDeployment(t, c, "rec")
		if err != nil {
			return err
		}
		if d.JobVersion != 1 || d.TaskGroups["web"] == nil || d.TaskGroups["web"].HealthyAllocs < 1 {
			return fmt.Errorf("deployment %s", jsonString(d))
		}
		return nil
	})
	_, err = c.Deployments().Promote(bg, d.ID, nil)
	must("promote", err)
	waitRollout(t, c, "rec", 1, structs.DeploymentStatusSuccessful, 90*time.Second)
	_, err = c.Jobs().Scale(bg, "rec", "web", 3, "recorded")
	must("scale", err)
	other := rolloutSpec{ID: "other", Count: 1, Version: "0", Update: "      max_parallel = 1"}
	other.run(t, c)
	_, err = c.Jobs().Deregister(bg, "other", false)
	must("deregister", err)
	_, err = c.Put(bg, "/v1/operator/autopilot/configuration", structs.DefaultAutopilotConfig(), nil)
	must("autopilot", err)
	// A scale is a new version of the job, rolled out.
	waitRollout(t, c, "rec", 2, structs.DeploymentStatusSuccessful, 90*time.Second)

	// The snapshot, then the log: the agent stopped (SIGTERM) first, so
	// that its log is whole and the bolt file free.
	snapshot, err := upgradeGetSnapshot(p.httpAddr, boot.SecretID)
	must("snapshot", err)
	var allocIDs []string
	for _, job := range []string{"rec", "other"} {
		allocs, err := jobAllocs(t, c, job)
		must("allocations", err)
		for _, a := range allocs {
			allocIDs = append(allocIDs, a.ID)
		}
	}
	p.stop()
	for _, id := range allocIDs {
		killAllocProcs(id)
	}
	idx, err := upgradeArchiveIndex(snapshot)
	must("snapshot index", err)
	dbs, _ := filepath.Glob(filepath.Join(dir, "*", "raft.db"))
	if more, _ := filepath.Glob(filepath.Join(dir, "*", "*", "raft.db")); len(dbs) == 0 {
		dbs = more
	}
	if len(dbs) != 1 {
		t.Fatalf("raft.db under %s: %v", dir, dbs)
	}
	store, err := raftboltdb.New(raftboltdb.Options{Path: dbs[0]})
	must("opening the log", err)
	defer store.Close()
	first, _ := store.FirstIndex()
	last, _ := store.LastIndex()
	rec := upgradeRecording{Commit: upgradePrevious(t), SnapshotIndex: idx}
	for i := first; i <= last && i > 0; i++ {
		var l raft.Log
		must("reading the log", store.GetLog(i, &l))
		rec.Entries = append(rec.Entries, upgradeEntry{Index: l.Index, Term: l.Term, Type: l.Type, Data: l.Data})
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	must("encoding", json.NewEncoder(zw).Encode(rec))
	must("compressing", zw.Close())
	must("mkdir", os.MkdirAll(out, 0o755))
	must("log", os.WriteFile(filepath.Join(out, "log.json.gz"), buf.Bytes(), 0o644))
	must("snapshot", os.WriteFile(filepath.Join(out, "snapshot.tar.gz"), snapshot, 0o644))
	t.Logf("recorded %d entries (%d..%d), snapshot at %d, from %s", len(rec.Entries), first, last, idx, rec.Commit[:7])
}

// upgradeGetSnapshot reads a snapshot archive from the agent at httpAddr.
func upgradeGetSnapshot(httpAddr, token string) ([]byte, error) {
	req, err := http.NewRequest("GET", "http://"+httpAddr+"/v1/operator/snapshot", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Nomad-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("%s: %s", resp.Status, b)
	}
	return b, err
}

// upgradeArchiveIndex is the Raft index of a snapshot archive's state.
func upgradeArchiveIndex(archive []byte) (uint64, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return 0, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return 0, fmt.Errorf("no meta.json: %w", err)
		}
		if h.Name == "meta.json" {
			var meta raft.SnapshotMeta
			if err := json.NewDecoder(tr).Decode(&meta); err != nil {
				return 0, err
			}
			return meta.Index, nil
		}
	}
}
