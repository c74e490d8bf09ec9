package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// chaosCluster is three server processes started from config files and
// one client process given all three with -client -servers. A server can
// be SIGKILLed and started again on the same config file and data
// directory.
type chaosCluster struct {
	t       testing.TB
	servers []*chaosServer
	client  *agentProc
}

// chaosServer is one server's identity and its current process (nil
// while it is down).
type chaosServer struct {
	name, http, raft, config string

	mu   sync.Mutex
	proc *agentProc
}

// startChaosCluster starts the three servers and the client and waits for
// an agreed leader and a ready node.
func startChaosCluster(t testing.TB) *chaosCluster {
	t.Helper()
	dir := t.TempDir()
	c := startChaosServers(t, dir)
	clientHTTP := loopback.Addr(t)
	clientDir := filepath.Join(dir, "c1")
	endTasksUnder(t, clientDir)
	c.client = startAgentProc(t, "c1", clientHTTP, "-client", "-data-dir", clientDir,
		"-servers", strings.Join(c.httpAddrs(), ","), "-http-addr", clientHTTP, "-node", "c1", "-log-level", "debug")
	c.waitLeader(c.servers)
	c.any().waitNodeReady(1)
	return c
}

// startChaosServers starts the three servers, with their config files and
// data directories under dir, and no client.
func startChaosServers(t testing.TB, dir string) *chaosCluster {
	t.Helper()
	c := &chaosCluster{t: t}
	var joins []string
	for i := 0; i < 3; i++ {
		s := &chaosServer{name: fmt.Sprintf("s%d", i+1), http: loopback.Addr(t), raft: loopback.Addr(t)}
		c.servers = append(c.servers, s)
		joins = append(joins, fmt.Sprintf("%q", s.http))
	}
	for _, s := range c.servers {
		s.config = filepath.Join(dir, s.name+".hcl")
		writeConfig(t, s.config, fmt.Sprintf(`
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
}
`, s.name, filepath.Join(dir, s.name), port(s.http), port(s.raft), strings.Join(joins, ", ")))
		c.start(s)
	}
	return c
}

// httpAddrs lists the servers' HTTP addresses, for a client's -servers.
func (c *chaosCluster) httpAddrs() []string {
	var addrs []string
	for _, s := range c.servers {
		addrs = append(addrs, s.http)
	}
	return addrs
}

func writeConfig(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// start runs a server's process from its config file.
func (c *chaosCluster) start(s *chaosServer) {
	p := startAgentProc(c.t, s.name, s.http, "-config", s.config)
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
}

// kill SIGKILLs a server's process and waits for it to end.
func (c *chaosCluster) kill(s *chaosServer) {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s did not exit after SIGKILL", s.name)
	}
}

// up returns the servers whose process runs.
func (c *chaosCluster) up() []*chaosServer {
	var out []*chaosServer
	for _, s := range c.servers {
		s.mu.Lock()
		if s.proc != nil {
			out = append(out, s)
		}
		s.mu.Unlock()
	}
	return out
}

func (s *chaosServer) api() *apiclient.Client {
	c, err := apiclient.New(s.http)
	if err != nil {
		panic(err) // a loopback host:port always parses
	}
	return c
}

// any returns a running server's process.
func (c *chaosCluster) any() *agentProc {
	for _, s := range c.up() {
		s.mu.Lock()
		p := s.proc
		s.mu.Unlock()
		if p != nil {
			return p
		}
	}
	c.t.Fatal("no server is running")
	return nil
}

// api returns a client of a running server (writes and consistent reads
// are forwarded to the leader).
func (c *chaosCluster) api() *apiclient.Client { return c.any().client() }

// leaderOf asks each of servers for the leader and returns the one they
// all name, or an error.
func (c *chaosCluster) leaderOf(servers []*chaosServer) (*chaosServer, error) {
	seen := ""
	for _, s := range servers {
		l, err := s.api().Status().Leader(ctx(c.t))
		if err != nil {
			return nil, err
		}
		if l == "" || (seen != "" && l != seen) {
			return nil, fmt.Errorf("%s sees leader %q, another %q", s.name, l, seen)
		}
		seen = l
	}
	for _, s := range c.servers {
		if s.raft == seen {
			return s, nil
		}
	}
	return nil, fmt.Errorf("leader %q is none of the servers", seen)
}

// waitLeader waits until servers agree on a leader among them and the
// configuration lists three voters.
func (c *chaosCluster) waitLeader(servers []*chaosServer) *chaosServer {
	c.t.Helper()
	var leader *chaosServer
	eventually(c.t, 60*time.Second, "an agreed leader", func() error {
		l, err := c.leaderOf(servers)
		if err != nil {
			return err
		}
		if l.proc == nil {
			return fmt.Errorf("leader %s is down", l.name)
		}
		peers, err := l.api().Status().Peers(ctx(c.t))
		if err != nil {
			return err
		}
		if len(peers) != 3 {
			return fmt.Errorf("peers %v", peers)
		}
		leader = l
		return nil
	})
	return leader
}

// killLeader SIGKILLs the current leader and returns it.
func (c *chaosCluster) killLeader() *chaosServer {
	c.t.Helper()
	l := c.waitLeader(c.up())
	c.t.Logf("killing leader %s", l.name)
	c.kill(l)
	return l
}

// localView is what one server holds of a job, read from its own copy.
func localView(t testing.TB, s *chaosServer, jobID string) (string, error) {
	q := &apiclient.QueryOptions{AllowStale: true}
	job, _, err := s.api().Jobs().Info(ctx(t), jobID, q)
	if err != nil {
		return "", err
	}
	deps, _, err := s.api().Jobs().Deployments(ctx(t), jobID, false, q)
	if err != nil {
		return "", err
	}
	var d *structs.Deployment
	for _, x := range deps {
		if x.JobVersion == job.Version {
			d = x
		}
	}
	if d == nil {
		return fmt.Sprintf("v%d no deployment", job.Version), nil
	}
	return fmt.Sprintf("v%d stable=%t deployment %s %s", job.Version, job.Stable, d.ID[:8], d.Status), nil
}

// waitAgree waits until every given server holds the same view of the
// job, equal to want when want is not empty, and returns it.
func waitAgree(t testing.TB, servers []*chaosServer, jobID, want string) string {
	t.Helper()
	var got string
	eventually(t, 60*time.Second, "servers agreeing on "+jobID, func() error {
		views := map[string]string{}
		for _, s := range servers {
			v, err := localView(t, s, jobID)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			views[s.name] = v
		}
		got = ""
		for name, v := range views {
			if got != "" && v != got {
				return fmt.Errorf("views differ: %v", views)
			}
			if want != "" && !strings.Contains(v, want) {
				return fmt.Errorf("%s holds %q, want %q", name, v, want)
			}
			got = v
		}
		return nil
	})
	return got
}
