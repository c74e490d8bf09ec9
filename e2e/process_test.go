package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
)

// server is one drover agent process.
type server struct {
	t        testing.TB
	name     string
	httpAddr string
	raftAddr string
	dataDir  string
	join     []string
	expect   int

	mu   sync.Mutex
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{}
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.

func newServer(t testing.TB, name string, expect int) *server {
	return &server{
		t: t, name: name, httpAddr: loopback.Addr(t), raftAddr: loopback.Addr(t),
		dataDir: filepath.Join(t.TempDir(), name), expect: expect,
	}
}

// start runs the agent; it is stopped (SIGKILL) when the test ends, and its
// output printed if the test failed.
func (s *server) start() {
	s.t.Helper()
	args := []string{"agent", "-server", "-bootstrap-expect", fmt.Sprint(s.expect),
		"-data-dir", s.dataDir, "-http-addr", s.httpAddr, "-raft-addr", s.raftAddr,
		"-node", s.name, "-log-level", "debug"}
	for _, j := range s.join {
		args = append(args, "-retry-join", j)
	}
	cmd := exec.Command(droverBin, args...)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Env = append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR=")
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting %s: %v", s.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.logs, s.done = cmd, logs, done
	s.mu.Unlock()
	s.t.Cleanup(func() {
		s.kill()
		if s.t.Failed() {
			s.t.Logf("---- %s output ----\n%s", s.name, logs.String())
		}
	})
}

// kill sends SIGKILL and waits for the process to end.
func (s *server) kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.t.Errorf("%s did not exit after SIGKILL", s.name)
	}
}

func (s *server) client() *apiclient.Client {
	c, err := apiclient.New(s.httpAddr)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

func (s *server) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logs == nil {
		return ""
	}
	return s.logs.String()
}

// eventually retries cond every 100ms until it returns nil, failing the
// test with the last error after limit.
func eventually(t testing.TB, limit time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %v", limit, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ctx bounds one API call.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// jobJSON is a minimal valid API job.
func jobJSON(id string) map[string]any {
	return map[string]any{
		"ID": id, "Name": id, "Type": "service", "Datacenters": []string{"dc1"},
		"TaskGroups": []any{map[string]any{
			"Name": "web", "Count": 1,
			"Tasks": []any{map[string]any{"Name": "app", "Driver": "raw_exec",
				"Config": map[string]any{"command": "/bin/sleep", "args": []string{"60"}}}},
		}},
	}
}

func sortedKeys(m map[string]bool) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}
