package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/drivers/exec"
	"github.com/droverhq/drover/drivers/exec/exectest"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// requireIsolation skips a test of the exec driver where it cannot run
// (not root, no cgroups, no busybox), unless DROVER_REQUIRE_ISOLATION=1
// makes that a failure.
func requireIsolation(t testing.TB) {
	t.Helper()
	exectest.Require(t, exec.Unsupported, exectest.NoBusybox)
}

// waitReattached waits until the task "app" of allocID, as c sees it,
// runs again after its client agent was restarted, and check (when not
// nil) passes.
func waitReattached(t testing.TB, c *apiclient.Client, allocID string, check func(*structs.TaskState) error) {
	t.Helper()
	eventually(t, 60*time.Second, "the task re-attached and running", func() error {
		a, _, err := c.Allocations().Info(ctx(t), allocID, nil)
		if err != nil {
			return err
		}
		st := a.TaskStates["app"]
		if a.ClientStatus != structs.AllocClientStatusRunning || st == nil || st.State != structs.TaskStateRunning {
			return fmt.Errorf("alloc %s, task %+v", a.ClientStatus, st)
		}
		if check != nil {
			return check(st)
		}
		return nil
	})
}

// TestExecDriverIsolatesATask runs an exec job on a dev agent: its task
// is not root, cannot read a host file outside its root, sees only its
// own processes; alloc exec runs inside the same isolation; and its
// usage is read from its cgroup.
func TestExecDriverIsolatesATask(t *testing.T) {
	requireIsolation(t)
	p := startDevAgent(t)
	c := p.client()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "marker")
	if err := os.WriteFile(marker, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`echo uid=$(id -u); cat %s 2>/dev/null || echo marker-unreadable; `+
		`echo procs=$(ls /proc | grep -cE '^[0-9]+$'); echo dir=$NOMAD_TASK_DIR; echo started; exec sleep 600`, marker)
	job := fmt.Sprintf(`job "isolated" {
  datacenters = ["dc1"]
  group "g" {
    task "app" {
      driver = "exec"
      config {
        command = "/bin/busybox"
        args    = ["sh", "-c", %q]
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
`, script)
	alloc := runJobFile(t, p, job, "running")
	stopJobProcs(t, c, "isolated")
	waitLog(t, c, alloc.ID, "started", 1)
	out := taskLog(t, c, alloc.ID, "app")
	for _, want := range []string{"uid=65534\n", "marker-unreadable\n", "dir=/local\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the task's output lacks %q: %q", want, out)
		}
	}
	if strings.Contains(out, "host secret") || strings.Contains(out, "uid=0\n") {
		t.Fatalf("the task is not isolated: %q", out)
	}
	if !strings.Contains(out, "procs=") || strings.Contains(out, "procs=0") {
		t.Errorf("no process count: %q", out)
	} else {
		var n int
		fmt.Sscanf(out[strings.Index(out, "procs=")+len("procs="):], "%d", &n)
		if n > 6 {
			t.Errorf("the task sees %d processes, not only its own", n)
		}
	}

	short := alloc.ID[:8]
	stdout, _, code := droverRun(t, p, "", "alloc", "exec", short, "/bin/busybox", "sh", "-c", "id -u; cat "+marker+" 2>/dev/null || echo unreadable; ls /")
	if code != 0 || !strings.HasPrefix(stdout, "65534\n") || !strings.Contains(stdout, "unreadable") || !strings.Contains(stdout, "secrets") {
		t.Errorf("alloc exec is not inside the task's isolation: %d %q", code, stdout)
	}

	var usage struct {
		ResourceUsage struct {
			MemoryStats struct {
				Usage    uint64
				Measured []string
			}
		}
	}
	eventually(t, 30*time.Second, "the task's usage", func() error {
		if _, err := c.Get(ctx(t), "/v1/client/allocation/"+alloc.ID+"/stats", nil, &usage); err != nil {
			return err
		}
		if usage.ResourceUsage.MemoryStats.Usage == 0 {
			return fmt.Errorf("usage %+v", usage)
		}
		return nil
	})

	// Stopped, it leaves no cgroup behind.
	cgroups := []string{"/sys/fs/cgroup/memory/drover/" + alloc.ID + ".app", "/sys/fs/cgroup/drover/" + alloc.ID + ".app"}
	found := false
	for _, cg := range cgroups {
		if _, err := os.Stat(cg); err == nil {
			found = true
		}
	}
	if !found {
		t.Errorf("the running task has none of the cgroups %v", cgroups)
	}
	if _, err := c.Jobs().Deregister(ctx(t), "isolated", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the task's cgroup removed", func() error {
		for _, cg := range cgroups {
			if _, err := os.Stat(cg); err == nil {
				return fmt.Errorf("%s is still there", cg)
			}
		}
		return nil
	})
}

// TestExecTaskSurvivesAgentSIGKILL: an agent (server and client in one)
// killed with SIGKILL leaves its exec task running; started again on the
// same data directory, it re-attaches to the task (no second start) and
// stops it when the job is stopped.
func TestExecTaskSurvivesAgentSIGKILL(t *testing.T) {
	requireIsolation(t)
	data := t.TempDir()
	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	args := []string{"-server", "-client", "-bootstrap-expect", "1", "-data-dir", data,
		"-http-addr", httpAddr, "-raft-addr", raftAddr, "-node", "n1", "-log-level", "debug"}
	p1 := startAgentProc(t, "first", httpAddr, args...)
	p1.waitNodeReady(1)
	job := `job "survivor" {
  datacenters = ["dc1"]
  group "g" {
    task "app" {
      driver = "exec"
      config {
        command = "/bin/busybox"
        args    = ["sh", "-c", "trap 'exit 0' TERM; echo started; while :; do sleep 1 & wait; done"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`
	alloc := runJobFile(t, p1, job, "running")
	c := p1.client()
	waitLog(t, c, alloc.ID, "started", 1)
	// The task's shell (its sleeps come and go).
	var before []int
	for _, pid := range taskProcs()[alloc.ID] {
		if cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); strings.HasPrefix(string(cmd), "/bin/busybox\x00sh\x00") {
			before = append(before, pid)
		}
	}
	if len(before) != 1 {
		t.Fatalf("the task's shell not found: %v", before)
	}
	if entries, _ := os.ReadDir(filepath.Join(data, "exec")); len(entries) != 1 {
		t.Fatalf("the task's container state is not under the data dir's exec/: %v", entries)
	}
	_ = p1.cmd.Process.Signal(syscall.SIGKILL)
	<-p1.done
	for _, pid := range before {
		if !processAlive(pid) {
			t.Fatalf("the agent's SIGKILL killed the task's process %d", pid)
		}
	}

	p2 := startAgentProc(t, "second", httpAddr, args...)
	p2.waitNodeReady(1)
	c = p2.client()
	waitReattached(t, c, alloc.ID, func(st *structs.TaskState) error {
		started := 0
		for _, ev := range st.Events {
			if ev.Type == structs.TaskStarted {
				started++
			}
		}
		if started != 1 {
			return fmt.Errorf("started %d times", started)
		}
		return nil
	})
	for _, pid := range before {
		if !processAlive(pid) {
			t.Fatalf("the task's process %d died across the restart", pid)
		}
	}
	if log := taskLog(t, c, alloc.ID, "app"); strings.Count(log, "started") != 1 {
		t.Fatalf("the task started again: %q", log)
	}
	if _, err := c.Jobs().Deregister(ctx(t), "survivor", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the re-attached task stopped", func() error {
		if pids := taskProcs()[alloc.ID]; len(pids) > 0 {
			return fmt.Errorf("still running: %v", pids)
		}
		// Its container's state (and cgroup) destroyed.
		if entries, _ := os.ReadDir(filepath.Join(data, "exec")); len(entries) > 0 {
			return fmt.Errorf("state left: %v", entries)
		}
		return nil
	})
}

// processAlive reports whether pid runs (and is not a zombie).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	return !zombie(b)
}
