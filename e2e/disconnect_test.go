package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

const disconnectJobSrc = `job "cache" {
  group "kv" {
    count = 1
    disconnect {
      lost_after = "2m"
      reconcile  = "keep_original"
    }
    task "kv" {
      driver = "mock"
      config {}
    }
  }
}
`

// TestDisconnectedClientReconnects: a server and two client processes.
// The client running the job's alloc is frozen (SIGSTOP): its node turns
// disconnected and the alloc unknown, and a replacement runs on the other
// client. Thawed within lost_after, the client registers again and reports
// the alloc; with reconcile = keep_original the replacement is stopped and
// the original runs on.
func TestDisconnectedClientReconnects(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three agent processes")
	}
	t.Parallel()
	dir := t.TempDir()
	srvHTTP, srvRaft := loopback.Addr(t), loopback.Addr(t)
	cfg := filepath.Join(dir, "s1.hcl")
	writeFile(t, cfg, fmt.Sprintf(`
name      = "s1"
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "debug"
ports {
  http = %s
  raft = %s
}
server {
  enabled           = true
  bootstrap_expect  = 1
  min_heartbeat_ttl = "2s"
  heartbeat_grace   = "1s"
}
`, filepath.Join(dir, "s1"), port(srvHTTP), port(srvRaft)))
	srv := startAgentProc(t, "s1", srvHTTP, "-config", cfg)
	clients := map[string]*agentProc{}
	for _, name := range []string{"c1", "c2"} {
		addr := loopback.Addr(t)
		clients[name] = startAgentProc(t, name, addr, "-client", "-data-dir", filepath.Join(dir, name),
			"-servers", srvHTTP, "-http-addr", addr, "-node", name, "-log-level", "debug")
	}
	srv.waitNodeReady(2)
	c := srv.client()
	job, _, err := jobspec.Parse("cache.hcl", []byte(disconnectJobSrc), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, c, job)

	var orig *structs.AllocationListStub
	eventually(t, 30*time.Second, "the alloc running", func() error {
		allocs := allocsOf(t, c, "cache")
		if len(allocs) != 1 || allocs[0].ClientStatus != structs.AllocClientStatusRunning {
			return fmt.Errorf("allocs %s", jsonString(allocs))
		}
		orig = allocs[0]
		return nil
	})
	frozen := clients[orig.NodeName]
	if err := frozen.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			_ = frozen.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer thaw()

	var repl *structs.AllocationListStub
	eventually(t, 60*time.Second, "the alloc unknown and a replacement running elsewhere", func() error {
		n, _, err := c.Nodes().Info(ctx(t), orig.NodeID, nil)
		if err != nil {
			return err
		}
		if n.Status != structs.NodeStatusDisconnected {
			return fmt.Errorf("node %s", n.Status)
		}
		repl = nil
		for _, a := range allocsOf(t, c, "cache") {
			switch {
			case a.ID == orig.ID && a.ClientStatus != structs.AllocClientStatusUnknown:
				return fmt.Errorf("original %s", a.ClientStatus)
			case a.ID != orig.ID && a.ClientStatus == structs.AllocClientStatusRunning && a.NodeID != orig.NodeID:
				repl = a
			}
		}
		if repl == nil {
			return fmt.Errorf("no replacement running")
		}
		return nil
	})

	thaw()
	eventually(t, 60*time.Second, "the replacement stopped and the original running", func() error {
		var got []string
		for _, a := range allocsOf(t, c, "cache") {
			got = append(got, fmt.Sprintf("%s:%s/%s", a.ID[:8], a.DesiredStatus, a.ClientStatus))
			switch a.ID {
			case orig.ID:
				if a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientStatus != structs.AllocClientStatusRunning {
					return fmt.Errorf("original %s/%s", a.DesiredStatus, a.ClientStatus)
				}
			case repl.ID:
				if a.DesiredStatus != structs.AllocDesiredStatusStop || a.DesiredDescription != structs.AllocReconnected {
					return fmt.Errorf("replacement %s %q", a.DesiredStatus, a.DesiredDescription)
				}
			}
		}
		t.Logf("allocs %s", strings.Join(got, " "))
		return nil
	})
	n, _, err := c.Nodes().Info(ctx(t), orig.NodeID, nil)
	if err != nil || n.Status != structs.NodeStatusReady {
		t.Fatalf("node after reconnect: %v %v", n, err)
	}
}
