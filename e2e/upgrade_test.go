package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

var upgradeRecord = flag.String("upgrade.record", "",
	"record the previous release's log and snapshot (fsm/testdata/previous) into this directory")

// upgradePrevious returns the commit of the previous release, from
// upgrade/PREVIOUS (its first line that is not a comment).
func upgradePrevious(t testing.TB) string {
	t.Helper()
	f, err := os.Open("../upgrade/PREVIOUS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	t.Fatal("upgrade/PREVIOUS names no commit")
	return ""
}

// upgradeBuildMu serialises the previous release's builds.
var upgradeBuildMu sync.Mutex

// upgradePreviousBin builds the previous release's binary from the
// repository's history, once per commit (kept under the user's cache
// directory), and returns its path. A clone that lacks the commit (a
// shallow one) skips the test, saying how to fetch it.
func upgradePreviousBin(t testing.TB) string {
	t.Helper()
	commit := upgradePrevious(t)
	if out, err := exec.Command("git", "-C", "..", "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		t.Skipf("the previous release %s (upgrade/PREVIOUS) is not in this clone's history, a shallow clone: "+
			"git fetch --unshallow (or git fetch origin %s) lets the upgrade tests build it (%v %s)", commit, commit, err, out)
	}
	upgradeBuildMu.Lock()
	defer upgradeBuildMu.Unlock()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "drover-upgrade", commit, "drover")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	src := t.TempDir()
	export := exec.Command("sh", "-c", fmt.Sprintf("git -C .. archive %s | tar -x -C %q", commit, src))
	if out, err := export.CombinedOutput(); err != nil {
		t.Fatalf("exporting %s: %v\n%s", commit, err, out)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := bin + ".tmp"
	build := exec.Command("go", "build", "-ldflags", "-X main.Version="+commit[:7], "-o", tmp, "./cmd/drover")
	build.Dir = src
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the previous release %s: %v\n%s", commit, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	t.Logf("built the previous release %s in %s", commit[:7], time.Since(start).Round(time.Second))
	return bin
}

// upgradeProc is one agent process that can be stopped and started again
// with another binary on the same arguments (and so the same data
// directory and addresses).
type upgradeProc struct {
	t        testing.TB
	name     string
	httpAddr string
	args     []string

	mu   sync.Mutex
	bin  string
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{}
	// all is every run's output, for a failed test.
	all []*lockedBuffer
}

// upgradeStart runs bin agent args; httpAddr is where its API listens.
// It is killed when the test ends if still running.
func upgradeStart(t testing.TB, name, bin, httpAddr string, args ...string) *upgradeProc {
	t.Helper()
	p := &upgradeProc{t: t, name: name, httpAddr: httpAddr, args: append([]string{"agent"}, args...)}
	p.run(bin)
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			p.mu.Lock()
			defer p.mu.Unlock()
			for i, l := range p.all {
				t.Logf("---- %s output, run %d ----\n%s", name, i+1, l.String())
			}
		}
	})
	return p
}

// run starts the agent with bin.
func (p *upgradeProc) run(bin string) {
	p.t.Helper()
	cmd := exec.Command(bin, p.args...)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Env = append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR=")
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("starting %s: %v", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	p.mu.Lock()
	p.bin, p.cmd, p.logs, p.done = bin, cmd, logs, done
	p.all = append(p.all, logs)
	p.mu.Unlock()
}

// stop sends SIGTERM and waits for the exit, failing the test after 40s.
func (p *upgradeProc) stop() {
	p.t.Helper()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		p.t.Fatalf("%s did not exit within 40s of SIGTERM", p.name)
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *upgradeProc) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

func (p *upgradeProc) client() *apiclient.Client {
	c, err := apiclient.New(p.httpAddr)
	if err != nil {
		p.t.Fatal(err)
	}
	return c
}

// upgradeCtx bounds one request of the upgrade tests.
func upgradeCtx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

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
