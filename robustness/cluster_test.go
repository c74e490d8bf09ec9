package robustness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
)

// server is one server process: its identity, its Unix user (when the
// test runs as root, so that a partition can tell its packets apart) and
// its current process.
type server struct {
	name, http, raft, config, dataDir string
	uid, gid                          int    // 0: runs as the test's user
	unmount                           func() // the data dir's tmpfs (root only)

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	logs    *syncBuffer
	paused  bool
	stopped bool
	crashes []string // exits the test did not cause
}

// cluster is three servers and one client.
type cluster struct {
	t          testing.TB
	dir        string
	servers    []*server
	client     *exec.Cmd
	clientLogs *syncBuffer

	mu           sync.Mutex
	convergences int   // heals after which the servers converged
	seed         int64 // of the schedule (0: a fixed one)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// chaosUser returns the uid and gid of the Unix user name, adding it when
// missing; ok is false when users cannot be had (not root).
func chaosUser(name string) (uid, gid int, ok bool) {
	if os.Geteuid() != 0 {
		return 0, 0, false
	}
	if _, err := user.Lookup(name); err != nil {
		if out, err := exec.Command("useradd", "-r", "-M", "-s", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "useradd %s: %v %s\n", name, err, out)
			return 0, 0, false
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, false
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, true
}

// startCluster starts three servers, each as its own Unix user with its
// data dir on a tmpfs of its own when withUsers, and a client; extra is
// added to each server's server block.
func startCluster(t testing.TB, withUsers bool, extra string) *cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "drover-robustness-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755)
	c := &cluster{t: t, dir: dir}
	t.Cleanup(func() {
		c.stopAll()
		for _, s := range c.servers {
			if s.unmount != nil {
				s.unmount()
			}
		}
		if !t.Failed() {
			os.RemoveAll(dir)
		} else {
			t.Logf("servers' logs and the history kept under %s", dir)
		}
	})
	var joins []string
	for i := range 3 {
		s := &server{name: fmt.Sprintf("s%d", i+1), http: loopback.Addr(t), raft: loopback.Addr(t)}
		s.dataDir = filepath.Join(dir, s.name)
		if withUsers {
			var ok bool
			if s.uid, s.gid, ok = chaosUser("drover-chaos-" + s.name); !ok {
				t.Skip("partitions need root and useradd")
			}
		}
		if err := os.MkdirAll(s.dataDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if s.uid != 0 {
			_ = os.Chown(s.dataDir, s.uid, s.gid)
			// The data dir is a small file system of its own, so that
			// a fault can fill it.
			if s.unmount, err = mountDataDir(s.dataDir, s.uid, s.gid); err != nil {
				t.Fatal(err)
			}
		}
		c.servers = append(c.servers, s)
		joins = append(joins, strconv.Quote(s.http))
	}
	for _, s := range c.servers {
		s.config = filepath.Join(dir, s.name+".hcl")
		cfg := fmt.Sprintf(`
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
%s
}
`, s.name, s.dataDir, port(s.http), port(s.raft), strings.Join(joins, ", "), extra)
		if err := os.WriteFile(s.config, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		c.start(s)
	}
	clientHTTP := loopback.Addr(t)
	rawExec := filepath.Join(dir, "raw_exec.hcl")
	_ = os.WriteFile(rawExec, []byte("plugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\n"), 0o644)
	var addrs []string
	for _, s := range c.servers {
		addrs = append(addrs, s.http)
	}
	c.clientLogs = &syncBuffer{}
	c.client = exec.Command(droverBin, "agent", "-client", "-data-dir", filepath.Join(dir, "c1"),
		"-servers", strings.Join(addrs, ","), "-http-addr", clientHTTP, "-node", "c1", "-log-level", "debug", "-config", rawExec)
	c.client.Stdout, c.client.Stderr = c.clientLogs, c.clientLogs
	c.client.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.client.Start(); err != nil {
		t.Fatal(err)
	}
	c.waitLeader(60 * time.Second)
	return c
}

func port(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }

func (c *cluster) start(s *server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logs == nil {
		s.logs = &syncBuffer{}
	}
	cmd := exec.Command(droverBin, "agent", "-config", s.config)
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	cmd.Env = append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if s.uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid)}
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting %s: %v", s.name, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		if !s.stopped {
			// Only the test kills a server: any other exit is a crash.
			s.crashes = append(s.crashes, fmt.Sprintf("%s exited on its own at %s: %v", s.name, time.Now().UTC().Format("15:04:05"), err))
			s.stopped = true
		}
		s.mu.Unlock()
		close(done)
	}()
	s.cmd, s.done, s.paused, s.stopped = cmd, done, false, false
}

// signal sends sig to the server's process.
func (s *server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.stopped {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	switch sig {
	case syscall.SIGSTOP:
		s.paused = true
	case syscall.SIGCONT:
		s.paused = false
	case syscall.SIGKILL:
		s.stopped = true
	}
}

func (s *server) wait() {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

// crashed returns the exits of server processes the test did not cause.
func (c *cluster) crashed() []string {
	var out []string
	for _, s := range c.servers {
		s.mu.Lock()
		out = append(out, s.crashes...)
		s.mu.Unlock()
	}
	return out
}

func (c *cluster) stopAll() {
	for _, s := range c.servers {
		s.signal(syscall.SIGCONT)
		s.signal(syscall.SIGKILL)
		s.wait()
		if c.t.Failed() {
			_ = os.WriteFile(filepath.Join(c.dir, s.name+".log"), []byte(s.logs.String()), 0o644)
		}
	}
	if c.client != nil && c.client.Process != nil {
		// The client's tasks run in its process group.
		_ = syscall.Kill(-c.client.Process.Pid, syscall.SIGKILL)
		_ = c.client.Wait()
		if c.t.Failed() {
			_ = os.WriteFile(filepath.Join(c.dir, "c1.log"), []byte(c.clientLogs.String()), 0o644)
		}
	}
}

func (s *server) api() *apiclient.Client {
	a, _ := apiclient.New(s.http)
	return a
}

// leader returns the server every running server names as the leader's
// HTTP address, or nil.
func (c *cluster) leader() *server {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var got string
	for _, s := range c.servers {
		s.mu.Lock()
		down := s.stopped || s.paused
		s.mu.Unlock()
		if down {
			continue
		}
		var addr string
		if _, err := s.api().Get(ctx, "/v1/status/leader", nil, &addr); err != nil {
			return nil
		}
		if got != "" && addr != got {
			return nil
		}
		got = addr
	}
	for _, s := range c.servers {
		if s.raft == got || s.http == got {
			return s
		}
	}
	return nil
}

func (c *cluster) waitLeader(d time.Duration) *server {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if l := c.leader(); l != nil {
			return l
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("no agreed leader within %v", d)
	return nil
}
