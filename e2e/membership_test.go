package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// The membership tests run server processes that share a join token, with
// autopilot's stabilization time cut to a second or two.

const memberToken = "e2e-join-secret"

// memberServer is one server process started from a config file.
type memberServer struct {
	name, http, raft, dir, config string
	proc                          *agentProc
}

// startMember writes a server's config file and starts it. expect is its
// bootstrap_expect (a joining server gives more than it will ever see, so
// that it never bootstraps alone); autopilot is the body of the autopilot
// block.
func startMember(t *testing.T, dir, name string, expect int, autopilot string, join ...*memberServer) *memberServer {
	t.Helper()
	s := &memberServer{name: name, http: loopback.Addr(t), raft: loopback.Addr(t), dir: filepath.Join(dir, name)}
	var joins []string
	for _, j := range join {
		joins = append(joins, fmt.Sprintf("%q", j.http))
	}
	cfg := filepath.Join(dir, name+".hcl")
	s.config = cfg
	writeConfig(t, cfg, fmt.Sprintf(`
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
  bootstrap_expect = %d
  retry_join       = [%s]
  join_token       = %q
}
autopilot {
%s
}
`, name, s.dir, port(s.http), port(s.raft), expect, strings.Join(joins, ", "), memberToken, autopilot))
	s.proc = startAgentProc(t, name, s.http, "-config", cfg)
	return s
}

func (s *memberServer) api(t testing.TB) *apiclient.Client {
	c, err := apiclient.New(s.http)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *memberServer) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := s.proc.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s to %s: %v", sig, s.name, err)
	}
}

// raftPeers reads the Raft configuration through s, by Raft address.
func raftPeers(t testing.TB, s *memberServer) (map[string]*structs.RaftServer, error) {
	cfg, err := s.api(t).Operator().RaftConfiguration(ctx(t))
	if err != nil {
		return nil, err
	}
	out := map[string]*structs.RaftServer{}
	for _, p := range cfg.Servers {
		out[p.Address] = p
	}
	return out, nil
}

// suffrage describes the configuration as "name:voter|non-voter,…" over
// the given servers, "-" for one not in it; extra counts the others.
func suffrage(peers map[string]*structs.RaftServer, servers ...*memberServer) string {
	var parts []string
	known := 0
	for _, s := range servers {
		p, ok := peers[s.raft]
		switch {
		case !ok:
			parts = append(parts, s.name+":-")
		case p.Voter:
			known++
			parts = append(parts, s.name+":voter")
		default:
			known++
			parts = append(parts, s.name+":non-voter")
		}
	}
	if extra := len(peers) - known; extra > 0 {
		parts = append(parts, fmt.Sprintf("+%d", extra))
	}
	return strings.Join(parts, ",")
}

func waitSuffrage(t *testing.T, via *memberServer, limit time.Duration, want string, servers ...*memberServer) {
	t.Helper()
	eventually(t, limit, want, func() error {
		peers, err := raftPeers(t, via)
		if err != nil {
			return err
		}
		if got := suffrage(peers, servers...); got != want {
			return fmt.Errorf("configuration %s", got)
		}
		// A configuration is known before its election ends: wait for
		// the leader too, so that the next write finds one.
		if l, err := via.api(t).Status().Leader(ctx(t)); err != nil || l == "" {
			return fmt.Errorf("no leader yet (%v)", err)
		}
		return nil
	})
}

// A server paused with SIGSTOP just after it joined stays a non-voter
// while paused and while it catches up, and is promoted only once it has
// been caught up and healthy for the stabilization time.
func TestMembershipPausedServerIsNotPromotedUntilItCatchesUp(t *testing.T) {
	const stabilization = 2 * time.Second
	ap := `  server_stabilization_time = "2s"
  max_trailing_logs         = 10
  cleanup_dead_servers      = false`
	dir := t.TempDir()
	s1 := startMember(t, dir, "s1", 1, ap)
	waitSuffrage(t, s1, 30*time.Second, "s1:voter", s1)
	acked := map[string]bool{}
	srv1 := &server{t: t, name: "s1", httpAddr: s1.http}
	register(t, srv1, "before-0", acked)

	s2 := startMember(t, dir, "s2", 3, ap, s1)
	// Pause s2 the moment it is in the configuration: well before it can
	// have been stable for 2s.
	eventually(t, 30*time.Second, "s2 added", func() error {
		peers, err := raftPeers(t, s1)
		if err != nil {
			return err
		}
		if got := suffrage(peers, s1, s2); got != "s1:voter,s2:non-voter" {
			return fmt.Errorf("configuration %s", got)
		}
		return nil
	})
	s2.signal(t, syscall.SIGSTOP)
	paused := time.Now()

	// While s2 is paused the log moves on by far more than
	// max_trailing_logs, and the cluster keeps taking writes.
	for i := range 10 {
		register(t, srv1, fmt.Sprintf("paused-%d", i), acked)
	}
	for time.Since(paused) < 2*stabilization {
		peers, err := raftPeers(t, s1)
		if err != nil {
			t.Fatal(err)
		}
		if got := suffrage(peers, s1, s2); got != "s1:voter,s2:non-voter" {
			t.Fatalf("while s2 is paused: %s", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	h, err := s1.api(t).Operator().AutopilotHealth(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range h.Servers {
		if s.Address == s2.raft && (s.Healthy || s.SerfStatus != "failed") {
			t.Fatalf("paused s2 is reported %+v", s)
		}
	}

	s2.signal(t, syscall.SIGCONT)
	resumed := time.Now()
	var promoted time.Time
	eventually(t, 30*time.Second, "s2 promoted", func() error {
		peers, err := raftPeers(t, s1)
		if err != nil {
			return err
		}
		if got := suffrage(peers, s1, s2); got != "s1:voter,s2:voter" {
			return fmt.Errorf("configuration %s", got)
		}
		promoted = time.Now()
		return nil
	})
	// Promotion waits for a whole stabilization time of health after the
	// pause (the probe loop may see health a little after the resume).
	if took := promoted.Sub(resumed); took < stabilization-200*time.Millisecond {
		t.Fatalf("s2 promoted %s after it resumed; the stabilization time is %s", took, stabilization)
	}
	// And it holds every acknowledged write.
	eventually(t, 10*time.Second, "s2 to hold every job", func() error {
		got, err := localJobs(t, &server{t: t, name: "s2", httpAddr: s2.http})
		if err != nil {
			return err
		}
		if got != sortedKeys(acked) {
			return fmt.Errorf("s2 holds %s", got)
		}
		return nil
	})
	t.Logf("s2 paused %s, promoted %s after it resumed", resumed.Sub(paused).Round(time.Millisecond), promoted.Sub(resumed).Round(time.Millisecond))
}

// A three-server cluster loses a server in the middle of a rollout; a
// fourth and a fifth join, are promoted, and the dead one is removed; the
// rollout finishes.
func TestMembershipDeadServerIsReplacedDuringARollout(t *testing.T) {
	chaosCheck(t)
	ap := `  server_stabilization_time = "1s"
  cleanup_dead_servers      = true`
	dir := t.TempDir()
	s1 := startMember(t, dir, "s1", 3, ap)
	s2 := startMember(t, dir, "s2", 3, ap, s1)
	s3 := startMember(t, dir, "s3", 3, ap, s1, s2)
	waitSuffrage(t, s1, 60*time.Second, "s1:voter,s2:voter,s3:voter", s1, s2, s3)

	clientHTTP := loopback.Addr(t)
	clientDir := filepath.Join(dir, "c1")
	endTasksUnder(t, clientDir)
	client := startAgentProc(t, "c1", clientHTTP, "-client", "-data-dir", clientDir,
		"-servers", strings.Join([]string{s1.http, s2.http, s3.http}, ","), "-http-addr", clientHTTP, "-node", "c1", "-log-level", "debug")
	_ = client
	api := s1.api(t)
	eventually(t, 60*time.Second, "a ready node", func() error {
		nodes, _, err := api.Nodes().List(ctx(t), nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Status != structs.NodeStatusReady {
			return fmt.Errorf("nodes %s", jsonString(nodes))
		}
		return nil
	})

	const job = "members-web"
	// One alloc at a time, each healthy after 3s: the rollout lasts 12s
	// or more, the membership change a few seconds.
	spec := func(version string) rolloutSpec {
		return rolloutSpec{ID: job, Count: 4, Version: version, Update: `      max_parallel      = 1
      health_check      = "task_states"
      min_healthy_time  = "3s"
      healthy_deadline  = "1m"
      progress_deadline = "5m"`}
	}
	spec("1").run(t, api)
	waitRollout(t, api, job, 0, structs.DeploymentStatusSuccessful, 2*time.Minute)
	spec("2").run(t, api)
	waitRollout(t, api, job, 1, structs.DeploymentStatusRunning, time.Minute)

	// Kill a server that does not lead, so that s1 (which the test reads
	// through) survives; if s3 leads, kill s2.
	dead := s3
	if l, _ := api.Status().Leader(ctx(t)); l == s3.raft {
		dead = s2
	}
	_ = dead.proc.cmd.Process.Signal(syscall.SIGKILL)
	<-dead.proc.done
	live := []*memberServer{s1, s2, s3}
	for i, s := range live {
		if s == dead {
			live = append(live[:i:i], live[i+1:]...)
		}
	}

	s4 := startMember(t, dir, "s4", 3, ap, live...)
	s5 := startMember(t, dir, "s5", 3, ap, live...)
	all := []*memberServer{live[0], live[1], dead, s4, s5}
	want := fmt.Sprintf("%s:voter,%s:voter,%s:-,s4:voter,s5:voter", live[0].name, live[1].name, dead.name)
	waitSuffrage(t, s1, 90*time.Second, want, all...)
	if d, err := latestDeployment(t, api, job); err != nil || d.JobVersion != 1 || d.Status != structs.DeploymentStatusRunning {
		t.Fatalf("the rollout is no longer running once the membership has changed: %s, %v", jsonString(d), err)
	}

	d := waitRollout(t, api, job, 1, structs.DeploymentStatusSuccessful, 3*time.Minute)
	t.Logf("rollout %s: %s", d.ID, d.StatusDescription)
	h, err := api.Operator().AutopilotHealth(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Voters) != 4 || h.FailureTolerance != 1 {
		t.Fatalf("health after the replacement %s", jsonString(h))
	}
}

// The reproduction: a dev agent is a one-server cluster and
// refuses every join, keeping its leader and its writes.
func TestMembershipDevAgentRefusesJoins(t *testing.T) {
	dev := startDevAgent(t)
	body := `{"Self":{"ID":"bogus","Name":"bogus","RaftAddr":"127.0.0.1:1","HTTPAddr":"127.0.0.1:1"}}`
	resp, err := http.Post("http://"+dev.httpAddr+"/v1/internal/join", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("join to a dev agent: %d, want 403", resp.StatusCode)
	}
	cfg, err := dev.client().Operator().RaftConfiguration(ctx(t))
	if err != nil || len(cfg.Servers) != 1 || !cfg.Servers[0].Voter {
		t.Fatalf("configuration after a refused join: %s, %v", jsonString(cfg), err)
	}
	if _, err := dev.client().Jobs().Register(ctx(t), jobJSON("after-join")); err != nil {
		t.Fatalf("write after a refused join: %v", err)
	}
	if err := dev.client().Operator().RaftRemovePeerByAddress(ctx(t), "127.0.0.1:1"); !errors.As(err, new(*apiclient.StatusError)) {
		t.Fatalf("remove-peer of a server never added: %v, want a 404", err)
	}
}

// jobsAndDeployments describes what s holds, from its own copy: every job
// with its version and status, every deployment with its job, version and
// status, sorted.
func jobsAndDeployments(t testing.TB, s *memberServer) (string, error) {
	stale := &apiclient.QueryOptions{AllowStale: true}
	jobs, _, err := s.api(t).Jobs().List(ctx(t), stale)
	if err != nil {
		return "", err
	}
	deps, _, err := s.api(t).Deployments().List(ctx(t), stale)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, fmt.Sprintf("job %s %d %s", j.ID, j.JobModifyIndex, j.Status))
	}
	for _, d := range deps {
		lines = append(lines, fmt.Sprintf("deployment %s %s v%d %s", d.ID, d.JobID, d.JobVersion, d.Status))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), nil
}

// Two servers of three destroyed for good: the survivor restarts with a
// raft/peers.json naming itself and leads a one-server cluster with every
// job and deployment it held.
func TestMembershipPeersJSONRecoversASurvivor(t *testing.T) {
	chaosCheck(t)
	ap := `  server_stabilization_time = "1s"`
	dir := t.TempDir()
	s1 := startMember(t, dir, "s1", 3, ap)
	s2 := startMember(t, dir, "s2", 3, ap, s1)
	s3 := startMember(t, dir, "s3", 3, ap, s1, s2)
	servers := []*memberServer{s1, s2, s3}
	waitSuffrage(t, s1, 60*time.Second, "s1:voter,s2:voter,s3:voter", servers...)

	clientHTTP := loopback.Addr(t)
	clientDir := filepath.Join(dir, "c1")
	endTasksUnder(t, clientDir)
	client := startAgentProc(t, "c1", clientHTTP, "-client", "-data-dir", clientDir,
		"-servers", strings.Join([]string{s1.http, s2.http, s3.http}, ","), "-http-addr", clientHTTP, "-node", "c1", "-log-level", "debug")
	api := s1.api(t)
	spec := func(id, version string) rolloutSpec {
		return rolloutSpec{ID: id, Count: 2, Version: version, Update: `      max_parallel      = 1
      health_check      = "task_states"
      min_healthy_time  = "0s"
      healthy_deadline  = "1m"
      progress_deadline = "5m"`}
	}
	for _, id := range []string{"recover-a", "recover-b"} {
		spec(id, "1").run(t, api)
		waitRollout(t, api, id, 0, structs.DeploymentStatusSuccessful, 2*time.Minute)
	}
	spec("recover-a", "2").run(t, api)
	waitRollout(t, api, "recover-a", 1, structs.DeploymentStatusSuccessful, 2*time.Minute)

	// The survivor is a follower: it holds what the leader acknowledged.
	leaderAddr, err := api.Status().Leader(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	survivor := s3
	if leaderAddr == s3.raft {
		survivor = s2
	}
	var want string
	eventually(t, 30*time.Second, "every server to hold the same jobs and deployments", func() error {
		var views []string
		for _, s := range servers {
			v, err := jobsAndDeployments(t, s)
			if err != nil {
				return err
			}
			views = append(views, v)
		}
		if views[0] != views[1] || views[1] != views[2] || !strings.Contains(views[0], "deployment") {
			return fmt.Errorf("views differ:\n%s", strings.Join(views, "\n--\n"))
		}
		want = views[0]
		return nil
	})
	_ = client.cmd.Process.Signal(syscall.SIGKILL)
	for _, s := range servers {
		_ = s.proc.cmd.Process.Signal(syscall.SIGKILL)
		<-s.proc.done
	}

	id, err := os.ReadFile(filepath.Join(survivor.dir, "server-id"))
	if err != nil {
		t.Fatal(err)
	}
	peers := fmt.Sprintf(`[{"id": %q, "address": %q, "non_voter": false}]`, strings.TrimSpace(string(id)), survivor.raft)
	writeConfig(t, filepath.Join(survivor.dir, "raft", "peers.json"), peers)
	survivor.proc = startAgentProc(t, survivor.name+"-recovered", survivor.http, "-config", survivor.config)

	eventually(t, 30*time.Second, "the survivor to lead alone", func() error {
		l, err := survivor.api(t).Status().Leader(ctx(t))
		if err != nil {
			return err
		}
		if l != survivor.raft {
			return fmt.Errorf("leader %q", l)
		}
		return nil
	})
	got, err := jobsAndDeployments(t, survivor)
	if err != nil || got != want {
		t.Fatalf("after the recovery (%v):\n%s\nwant:\n%s", err, got, want)
	}
	waitSuffrage(t, survivor, 10*time.Second, survivor.name+":voter", survivor)
	if _, err := os.Stat(filepath.Join(survivor.dir, "raft", "peers.json")); !os.IsNotExist(err) {
		t.Fatalf("peers.json left after the recovery: %v", err)
	}
	acked := map[string]bool{}
	register(t, &server{t: t, name: survivor.name, httpAddr: survivor.http}, "after-recovery", acked)
	t.Logf("%s recovered alone, holding:\n%s", survivor.name, want)
}
