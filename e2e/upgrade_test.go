package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

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

// upgradeTarget is a server a writer sends writes through; down reports
// whether it was told to stop (or is stopped), so that a connection it
// refuses then is not counted as a refusal.
type upgradeTarget struct {
	name string
	addr func() string
	down func() bool
}

// upgradeWriter sends writes (variables upgrade/w<n>) through its targets
// in turn, each over a new connection, every interval, and keeps what
// each got.
type upgradeWriter struct {
	t        testing.TB
	token    string
	interval time.Duration

	mu      sync.Mutex
	acked   []string
	refused []string // "server: error"
	notUp   int      // connections refused by a stopped server
	sent    int

	stopCh chan struct{}
	done   chan struct{}
}

// upgradeStartWriter starts a writer that runs until stop.
func upgradeStartWriter(t testing.TB, token string, interval time.Duration, targets []upgradeTarget) *upgradeWriter {
	w := &upgradeWriter{t: t, token: token, interval: interval, stopCh: make(chan struct{}), done: make(chan struct{})}
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-w.stopCh:
				return
			case <-tick.C:
			}
			tg := targets[n%len(targets)]
			path := fmt.Sprintf("upgrade/w%d", n)
			c, err := apiclient.NewWithHTTPClient(tg.addr(), hc)
			if err != nil {
				t.Error(err)
				return
			}
			c.SetToken(token)
			wasDown := tg.down()
			_, err = c.VarPut(context.Background(), "default", &structs.Variable{Namespace: "default", Path: path,
				Items: structs.VariableItems{"n": fmt.Sprint(n)}}, false, 0)
			w.mu.Lock()
			w.sent++
			var op *net.OpError
			switch {
			case err == nil:
				w.acked = append(w.acked, path)
			case (wasDown || tg.down()) && errors.As(err, &op) && op.Op == "dial":
				w.notUp++
			default:
				w.refused = append(w.refused, fmt.Sprintf("%s %s (%s): %v", time.Now().Format("15:04:05.000"), tg.name, path, err))
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// stop ends the writer and returns what it saw.
func (w *upgradeWriter) stop() (sent int, acked, refused []string, notUp int) {
	close(w.stopCh)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent, w.acked, w.refused, w.notUp
}

// upgradeCheckAcked fails the test for each acknowledged write that c
// does not hold.
func upgradeCheckAcked(t testing.TB, c *apiclient.Client, acked []string) {
	t.Helper()
	lost := 0
	for _, path := range acked {
		if _, err := c.VarGet(upgradeCtx(t), path, nil); err != nil {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged write %s lost: %v", path, err)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged writes lost", lost, len(acked))
	}
}

// upgradeServerConfig is a server's configuration file for the upgrade
// test: three servers joined with a join token, so that the forwarded
// requests are signed.
func upgradeServerConfig(name, dataDir, httpAddr, raftAddr string, joins []string) string {
	return fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "debug"
ports {
  http = %s
  raft = %s
}
server {
  enabled          = true
  bootstrap_expect = 3
  retry_join       = [%s]
  join_token       = "upgrade-test-join-token"
}
`, name, dataDir, port(httpAddr), port(raftAddr), strings.Join(joins, ", "))
}

// upgradeWaitHealthy waits until every server answers, names the same
// leader, and the leader's autopilot finds the three servers healthy (the
// restarted one rejoined and caught up with the log).
func upgradeWaitHealthy(t testing.TB, servers []*upgradeProc) *upgradeProc {
	t.Helper()
	var leader *upgradeProc
	eventually(t, 90*time.Second, "three healthy servers agreeing on a leader", func() error {
		seen := ""
		for _, s := range servers {
			l, err := s.client().Status().Leader(upgradeCtx(t))
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if l == "" || seen != "" && l != seen {
				return fmt.Errorf("%s sees leader %q, another %q", s.name, l, seen)
			}
			seen = l
		}
		h, err := servers[0].client().Operator().AutopilotHealth(upgradeCtx(t))
		if err != nil {
			return err
		}
		if !h.Healthy || len(h.Servers) != 3 || len(h.Voters) != 3 {
			return fmt.Errorf("autopilot: %s", jsonString(h))
		}
		for _, s := range servers {
			self, err := s.client().Agent().Self(upgradeCtx(t))
			if err != nil {
				return err
			}
			if self.Config.Addresses.Raft == seen {
				leader = s
			}
		}
		if leader == nil {
			return fmt.Errorf("leader %q is none of the servers", seen)
		}
		return nil
	})
	return leader
}

// TestUpgradeFromThePreviousRelease upgrades a live cluster of the
// previous release (upgrade/PREVIOUS, built from the history) to this
// build, one agent at a time as website/production.md says: three servers
// and a client run a job whose rollout to a new version is in progress,
// and a writer sends a write every 50 ms through each server in turn;
// each follower, then the leader, is stopped (SIGTERM) and started again
// with this build on its data directory, once the cluster is healthy
// again; then the client. No write is refused through a server that was
// up, none acknowledged is lost, the rollout finishes, and no allocation
// is replaced beyond the rollout's own: the client's upgrade keeps every
// allocation and task process.
func TestUpgradeFromThePreviousRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release and runs four agents of each build")
	}
	prev := upgradePreviousBin(t)
	begin := time.Now()
	dir := t.TempDir()
	type addrs struct{ name, http, raft string }
	var as []addrs
	var joins, servers []string
	for i := range 3 {
		a := addrs{fmt.Sprintf("s%d", i+1), loopback.Addr(t), loopback.Addr(t)}
		as = append(as, a)
		joins = append(joins, fmt.Sprintf("%q", a.http))
		servers = append(servers, a.http)
	}
	var procs []*upgradeProc
	for _, a := range as {
		cfg := filepath.Join(dir, a.name+".hcl")
		writeFile(t, cfg, upgradeServerConfig(a.name, filepath.Join(dir, a.name), a.http, a.raft, joins))
		procs = append(procs, upgradeStart(t, a.name, prev, a.http, "-config", cfg))
	}
	clientHTTP := loopback.Addr(t)
	client := upgradeStart(t, "c1", prev, clientHTTP, withRawExec(t, []string{"-client", "-data-dir", filepath.Join(dir, "c1"),
		"-servers", strings.Join(servers, ","), "-http-addr", clientHTTP, "-node", "c1", "-log-level", "debug"})...)
	upgradeWaitHealthy(t, procs)
	c := procs[0].client()
	eventually(t, 60*time.Second, "the client ready", func() error {
		nodes, _, err := c.Nodes().List(upgradeCtx(t), nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Status != structs.NodeStatusReady {
			return fmt.Errorf("nodes %s", jsonString(nodes))
		}
		return nil
	})
	eventually(t, 30*time.Second, "the keyring's first key", func() error {
		_, err := c.KeyringList(upgradeCtx(t))
		return err
	})

	spec := rolloutSpec{ID: "up", Count: 3, Version: "0",
		Update: "      max_parallel     = 1\n      min_healthy_time = \"4s\"\n      healthy_deadline = \"2m\"\n      progress_deadline = \"5m\""}
	spec.run(t, c)
	stopJobProcs(t, c, "up")
	waitRollout(t, c, "up", 0, structs.DeploymentStatusSuccessful, 90*time.Second)

	down := make([]atomic.Bool, len(procs))
	var targets []upgradeTarget
	for i, p := range procs {
		targets = append(targets, upgradeTarget{name: p.name, addr: func() string { return p.httpAddr }, down: down[i].Load})
	}
	w := upgradeStartWriter(t, "", 50*time.Millisecond, targets)

	// The rollout to version 1, in progress through the servers' upgrades.
	spec.Version = "1"
	spec.run(t, c)
	rolloutStart := time.Now()

	upgrade := func(i int) {
		t.Helper()
		p := procs[i]
		start := time.Now()
		down[i].Store(true)
		p.stop()
		p.run(droverBin)
		// Up with this build, then caught up with the log as it stood
		// once it was up, and healthy to the leader's autopilot.
		var idx uint64
		eventually(t, 60*time.Second, p.name+" up with this build", func() error {
			self, err := p.client().Agent().Self(upgradeCtx(t))
			if err != nil {
				return err
			}
			if self.Member.Build != structs.ServerBuild {
				return fmt.Errorf("%s runs build %d, want %d", p.name, self.Member.Build, structs.ServerBuild)
			}
			_, meta, err := procs[(i+1)%len(procs)].client().Jobs().List(upgradeCtx(t), nil)
			if err != nil {
				return err
			}
			idx = meta.LastIndex
			return nil
		})
		eventually(t, 60*time.Second, p.name+" caught up", func() error {
			_, meta, err := p.client().Jobs().List(upgradeCtx(t), &apiclient.QueryOptions{AllowStale: true})
			if err != nil {
				return err
			}
			if meta.LastIndex < idx {
				return fmt.Errorf("%s at index %d, the leader at %d", p.name, meta.LastIndex, idx)
			}
			return nil
		})
		upgradeWaitHealthy(t, procs)
		down[i].Store(false)
		t.Logf("%s upgraded in %v", p.name, time.Since(start).Round(time.Millisecond))
	}
	leader := upgradeWaitHealthy(t, procs)
	for i, p := range procs {
		if p != leader {
			upgrade(i)
		}
	}
	for i, p := range procs {
		if p == leader {
			upgrade(i)
		}
	}
	waitRollout(t, c, "up", 1, structs.DeploymentStatusSuccessful, 3*time.Minute)
	t.Logf("the rollout finished %v after it started", time.Since(rolloutStart).Round(time.Millisecond))

	// The client: its allocations and their processes are kept.
	before := upgradeRunning(t, c)
	nodes, _, err := c.Nodes().List(upgradeCtx(t), nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes %s: %v", jsonString(nodes), err)
	}
	node, _, err := c.Nodes().Info(upgradeCtx(t), nodes[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	client.stop()
	client.run(droverBin)
	eventually(t, 60*time.Second, "the upgraded client registered again", func() error {
		n, _, err := c.Nodes().Info(upgradeCtx(t), node.ID, nil)
		if err != nil {
			return err
		}
		if n.Status != structs.NodeStatusReady || n.ModifyIndex == node.ModifyIndex {
			return fmt.Errorf("node %s, modify index %d (was %d)", n.Status, n.ModifyIndex, node.ModifyIndex)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	after := upgradeRunning(t, c)
	if jsonString(before) != jsonString(after) {
		t.Errorf("the client's upgrade changed the allocations or their processes:\nbefore %s\nafter  %s", jsonString(before), jsonString(after))
	}
	allocs, err := jobAllocs(t, c, "up")
	if err != nil {
		t.Fatal(err)
	}
	if len(allocs) != 6 {
		t.Errorf("%d allocations, want 6 (3 of each version, none replaced): %s", len(allocs), jsonString(allocs))
	}

	sent, acked, refused, notUp := w.stop()
	t.Logf("upgrade from %s: %d writes sent, %d acknowledged, %d refused, %d not taken by a stopped server; %v in all",
		upgradePrevious(t)[:7], sent, len(acked), len(refused), notUp, time.Since(begin).Round(time.Second))
	if len(refused) > 0 {
		t.Errorf("%d writes refused through servers that were up:\n%s", len(refused), strings.Join(refused[:min(len(refused), 10)], "\n"))
	}
	upgradeCheckAcked(t, procs[0].client(), acked)
}

// upgradeRunning maps the job's running allocations to their task
// processes.
func upgradeRunning(t testing.TB, c *apiclient.Client) map[string][]int {
	t.Helper()
	allocs, err := jobAllocs(t, c, "up")
	if err != nil {
		t.Fatal(err)
	}
	procs := taskProcs()
	out := map[string][]int{}
	for _, a := range allocs {
		if a.ClientStatus == structs.AllocClientStatusRunning {
			out[a.ID] = procs[a.ID]
		}
	}
	return out
}

// The skew the other way: a client of this build works with servers of
// the previous release (a client upgraded before its servers, against the
// order website/production.md gives): it registers, runs a job's
// allocation, reports it healthy, and stops it when the job is stopped.
func TestUpgradeClientBeforeItsServers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release and runs two agents")
	}
	prev := upgradePreviousBin(t)
	dir := t.TempDir()
	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	srv := upgradeStart(t, "s1", prev, httpAddr, "-server", "-bootstrap-expect", "1", "-data-dir", filepath.Join(dir, "s1"),
		"-http-addr", httpAddr, "-raft-addr", raftAddr, "-node", "s1", "-log-level", "debug")
	clientHTTP := loopback.Addr(t)
	upgradeStart(t, "c1", droverBin, clientHTTP, withRawExec(t, []string{"-client", "-data-dir", filepath.Join(dir, "c1"),
		"-servers", httpAddr, "-http-addr", clientHTTP, "-node", "c1", "-log-level", "debug"})...)
	c := srv.client()
	eventually(t, 60*time.Second, "the new client ready", func() error {
		nodes, _, err := c.Nodes().List(upgradeCtx(t), nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Status != structs.NodeStatusReady {
			return fmt.Errorf("nodes %s", jsonString(nodes))
		}
		return nil
	})
	spec := rolloutSpec{ID: "skew", Count: 2, Version: "0", Update: "      max_parallel     = 1\n      min_healthy_time = \"1s\""}
	spec.run(t, c)
	stopJobProcs(t, c, "skew")
	waitRollout(t, c, "skew", 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	allocs, err := jobAllocs(t, c, "skew")
	if err != nil {
		t.Fatal(err)
	}
	ids := runningAllocs(allocs, 0)
	if len(ids) != 2 {
		t.Fatalf("%d running allocations, want 2: %s", len(ids), jsonString(allocs))
	}
	if err := allHaveProcesses(ids); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Jobs().Deregister(upgradeCtx(t), "skew", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the tasks stopped", func() error {
		procs := taskProcs()
		for _, id := range ids {
			if len(procs[id]) > 0 {
				return fmt.Errorf("%s still runs %v", id, procs[id])
			}
		}
		return nil
	})
}
