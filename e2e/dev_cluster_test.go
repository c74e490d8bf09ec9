package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
)

// TestServersFromConfigFilesAndAClientRunAJob forms a cluster of three
// servers configured by files, adds a client given all three with
// -client -servers, registers a job through a follower and checks that it
// runs on the client (a real process, its log read from the client's own
// HTTP address); stopping the job through a follower ends the process.
func TestServersFromConfigFilesAndAClientRunAJob(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four agent processes")
	}
	dir := t.TempDir()
	procs, addrs := startThreeServers(t, dir, `log_level = "debug"`)
	clientHTTP := loopback.Addr(t)
	cl := startAgentProc(t, "c1", clientHTTP, "-client", "-data-dir", filepath.Join(dir, "c1"),
		"-servers", strings.Join(addrs, ","), "-http-addr", clientHTTP, "-node", "c1", "-log-level", "debug")
	procs[0].waitNodeReady(1)

	follower := findFollower(t, procs)
	c := follower.client()
	job := parseJob(t, "testdata/echo.hcl")
	registerJob(t, c, job)
	var allocID string
	eventually(t, 30*time.Second, "the job running on the client", func() error {
		allocs, err := jobAllocs(t, c, job.ID)
		if err != nil {
			return err
		}
		run := runningAllocs(allocs, 0)
		if len(run) != 1 {
			return fmt.Errorf("%d running: %s", len(run), jsonString(allocs))
		}
		allocID = run[0]
		if allocs[0].NodeName != "c1" {
			return fmt.Errorf("placed on %q", allocs[0].NodeName)
		}
		return allHaveProcesses(run)
	})
	t.Cleanup(func() { killAllocProcs(allocID) })

	// The client's logs endpoint, at the node's HTTPAddr.
	alloc, _, err := c.Allocations().Info(ctx(t), allocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	node, _, err := c.Nodes().Info(ctx(t), alloc.NodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if node.HTTPAddr != clientHTTP {
		t.Fatalf("node HTTPAddr %q, want %q", node.HTTPAddr, clientHTTP)
	}
	nc, err := apiclient.New(node.HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the task's stdout", func() error {
		rc, err := nc.AllocLogs(bounded(t, 5*time.Second), allocID, apiclient.LogsOptions{Task: "echo"})
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), "hello from drover") {
			return fmt.Errorf("stdout %q", b)
		}
		return nil
	})

	// Stopping the job through the follower ends the process.
	if _, err := c.Jobs().Deregister(ctx(t), job.ID, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the task's process to end", func() error {
		if p := taskProcs()[allocID]; len(p) > 0 {
			return fmt.Errorf("still running: %v", p)
		}
		return nil
	})
	if code := cl.interrupt(); code != 0 {
		t.Errorf("client exited %d after SIGINT", code)
	}
}

// findFollower returns a server process that is not the leader, once the
// three agree on one leader.
func findFollower(t *testing.T, procs []*agentProc) *agentProc {
	t.Helper()
	var follower *agentProc
	eventually(t, 30*time.Second, "a leader known to every server", func() error {
		cfg, err := procs[0].client().Operator().RaftConfiguration(ctx(t))
		if err != nil {
			return err
		}
		leaderRaft := ""
		for _, s := range cfg.Servers {
			if s.Leader {
				leaderRaft = s.Address
			}
		}
		if leaderRaft == "" || len(cfg.Servers) != 3 {
			return fmt.Errorf("configuration %s", jsonString(cfg))
		}
		for _, p := range procs {
			self, err := p.client().Agent().Self(ctx(t))
			if err != nil {
				return err
			}
			if self.Config.Addresses.Raft != leaderRaft {
				follower = p
			}
		}
		return nil
	})
	return follower
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// port returns the port of host:port.
func port(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

// killAllocProcs kills whatever process an alloc left behind.
func killAllocProcs(allocID string) {
	for _, pid := range taskProcs()[allocID] {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// startThreeServers runs three server agents from config files in dir
// (extra is added to each file) and returns them with their HTTP
// addresses.
func startThreeServers(t *testing.T, dir, extra string) ([]*agentProc, []string) {
	t.Helper()
	type srv struct{ name, http, raft string }
	servers := make([]srv, 3)
	var joins, addrs []string
	for i := range servers {
		servers[i] = srv{fmt.Sprintf("s%d", i+1), loopback.Addr(t), loopback.Addr(t)}
		joins = append(joins, fmt.Sprintf("%q", servers[i].http))
		addrs = append(addrs, servers[i].http)
	}
	procs := make([]*agentProc, 3)
	for i, s := range servers {
		cfg := filepath.Join(dir, s.name+".hcl")
		writeFile(t, cfg, fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
%s
ports {
  http = %s
  raft = %s
}
server {
  enabled          = true
  bootstrap_expect = 3
  retry_join       = [%s]
}
`, s.name, filepath.Join(dir, s.name), extra, port(s.http), port(s.raft), strings.Join(joins, ", ")))
		procs[i] = startAgentProc(t, s.name, s.http, "-config", cfg)
	}
	return procs, addrs
}
