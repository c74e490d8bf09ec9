package e2e

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers/exec"
	"github.com/droverhq/drover/drivers/exec/exectest"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// requireJava skips a test of the java driver where it cannot run (not
// root, no cgroups, no JVM), unless DROVER_REQUIRE_ISOLATION=1 makes that
// a failure.
func requireJava(t testing.TB) {
	t.Helper()
	exectest.Require(t, exec.Unsupported, func() string {
		if _, err := osexec.LookPath("java"); err != nil {
			return "no java on the PATH (Debian's default-jre-headless)"
		}
		return ""
	})
}

// serveJavaTestdata serves drivers/java/testdata's hello.jar and
// Hello.class on 127.0.0.1 and returns the base URL.
func serveJavaTestdata(t testing.TB) string {
	t.Helper()
	files := map[string][]byte{}
	for _, f := range []string{"hello.jar", "Hello.class"} {
		b, err := os.ReadFile(filepath.Join("..", "drivers", "java", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		files["/"+f] = b
	}
	return serveFiles(t, files)
}

// TestJavaDriverRunsAJarArtifact runs java jobs on a dev agent. The node
// reports the JVM (driver.java.version); a service runs a jar fetched as
// an artifact from 127.0.0.1, as nobody, PID 1 of its own namespace, in a
// root where a host file is not; its output is in alloc logs; alloc exec
// runs inside its isolation; stopping the job runs the JVM's shutdown
// hooks. A batch job runs a class from a class path and completes, and
// examples/java.hcl runs.
func TestJavaDriverRunsAJarArtifact(t *testing.T) {
	requireJava(t)
	base := serveJavaTestdata(t)
	p := startDevAgent(t)
	c := p.client()

	nodes, _, err := c.Nodes().List(ctx(t), nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes %v: %v", nodes, err)
	}
	n, _, err := c.Nodes().Info(ctx(t), nodes[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := n.Drivers[structs.DriverJava]; d == nil || !d.Detected || !d.Healthy || n.Attributes["driver.java"] != "1" ||
		n.Attributes["driver.java.version"] == "" || n.Attributes["driver.java.vm"] == "" {
		t.Fatalf("the dev node's java driver: %+v, attributes %v", d, n.Attributes)
	}

	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "marker")
	if err := os.WriteFile(marker, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf(`job "hello-jar" {
  datacenters = ["dc1"]
  group "g" {
    task "app" {
      driver = "java"
      artifact {
        source = "%s/hello.jar"
      }
      config {
        jar_path    = "local/hello.jar"
        jvm_options = ["-Xmx32m"]
        args        = ["exists", %q, "exists", "/local/hello.jar", "sleep", "600"]
      }
      kill_timeout = "20s"
      resources {
        cpu    = 100
        memory = 256
      }
    }
  }
}
`, base, marker)
	alloc := runJobFile(t, p, job, "running")
	waitLog(t, c, alloc.ID, "started", 1)
	out := taskLog(t, c, alloc.ID, "app")
	for _, want := range []string{"user.name=nobody\n", "pid=1\n", "user.dir=/\n", "task_dir=/local\n",
		"exists " + marker + "=false\n", "exists /local/hello.jar=true\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the task's output lacks %q: %q", want, out)
		}
	}
	short := alloc.ID[:8]
	if stdout, _, code := droverRun(t, p, "", "alloc", "logs", short, "app"); code != 0 || !strings.Contains(stdout, "hello from java exists") {
		t.Errorf("alloc logs: %d %q", code, stdout)
	}
	stdout, _, code := droverRun(t, p, "", "alloc", "exec", short, "/bin/sh", "-c", "id -u; cat "+marker+" 2>/dev/null || echo unreadable; ls /local")
	if code != 0 || !strings.HasPrefix(stdout, "65534\n") || !strings.Contains(stdout, "unreadable") || !strings.Contains(stdout, "hello.jar") {
		t.Errorf("alloc exec is not inside the task's isolation: %d %q", code, stdout)
	}

	// Stopped, the JVM gets SIGTERM and runs its shutdown hooks.
	if _, err := c.Jobs().Deregister(ctx(t), "hello-jar", false); err != nil {
		t.Fatal(err)
	}
	waitLog(t, c, alloc.ID, "stopping", 1)
	eventually(t, 30*time.Second, "the JVM gone", func() error {
		if pids := taskProcs()[alloc.ID]; len(pids) > 0 {
			return fmt.Errorf("processes %v", pids)
		}
		return nil
	})

	// class and class_path: a class file fetched into a directory.
	batch := fmt.Sprintf(`job "hello-class" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    task "app" {
      driver = "java"
      artifact {
        source      = "%s/Hello.class"
        destination = "local/classes"
      }
      config {
        class      = "Hello"
        class_path = "local/classes"
        args       = ["exit", "0"]
      }
      resources {
        cpu    = 100
        memory = 256
      }
    }
  }
}
`, base)
	done := runJobFile(t, p, batch, "complete")
	if got := taskLog(t, c, done.ID, "app"); !strings.Contains(got, "hello from java exit 0\n") || !strings.Contains(got, "user.name=nobody\n") {
		t.Errorf("the class's output: %q", got)
	}

	// examples/java.hcl, its jar from the same server.
	ex := parseJob(t, "../examples/java.hcl", "jar_url="+base+"/hello.jar")
	registerJob(t, c, ex)
	var running []string
	eventually(t, 60*time.Second, "the example's two allocations running, with their output", func() error {
		allocs, err := jobAllocs(t, c, ex.ID)
		if err != nil {
			return err
		}
		running = running[:0]
		for _, a := range allocs {
			if a.ClientStatus == structs.AllocClientStatusRunning && strings.Contains(taskLog(t, c, a.ID, "hello"), "hello from java version 1 sleep 86400\n") {
				running = append(running, a.ID)
			}
		}
		if len(running) != 2 {
			return fmt.Errorf("running with output: %v of %d", running, len(allocs))
		}
		return nil
	})
	t.Cleanup(func() {
		for _, id := range running {
			killAllocProcs(id)
		}
	})
	if _, err := c.Jobs().Deregister(ctx(t), ex.ID, false); err != nil {
		t.Fatal(err)
	}
	// Stopped by the client (not by the test's cleanup, which would leave
	// their cgroups behind once the agent is gone).
	eventually(t, 30*time.Second, "the example's JVMs stopped, their cgroups removed", func() error {
		for _, id := range running {
			if pids := taskProcs()[id]; len(pids) > 0 {
				return fmt.Errorf("%s still runs %v", id, pids)
			}
			for _, cg := range []string{"/sys/fs/cgroup/memory/drover/" + id + ".hello", "/sys/fs/cgroup/drover/" + id + ".hello"} {
				if _, err := os.Stat(cg); err == nil {
					return fmt.Errorf("%s is still there", cg)
				}
			}
		}
		return nil
	})
}

// TestJavaTaskSurvivesAgentSIGKILL: an agent killed with SIGKILL leaves
// its JVM running; started again on the same data directory, it
// re-attaches to it through the java driver's state (no second start),
// and stopping the job reaches the JVM, which runs its shutdown hooks.
func TestJavaTaskSurvivesAgentSIGKILL(t *testing.T) {
	requireJava(t)
	base := serveJavaTestdata(t)
	data := t.TempDir()
	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	args := []string{"-server", "-client", "-bootstrap-expect", "1", "-data-dir", data,
		"-http-addr", httpAddr, "-raft-addr", raftAddr, "-node", "n1", "-log-level", "debug"}
	p1 := startAgentProc(t, "first", httpAddr, args...)
	p1.waitNodeReady(1)
	job := fmt.Sprintf(`job "jvm-survivor" {
  datacenters = ["dc1"]
  group "g" {
    task "app" {
      driver = "java"
      artifact {
        source = "%s/hello.jar"
      }
      config {
        jar_path = "local/hello.jar"
        args     = ["sleep", "600"]
      }
      resources {
        cpu    = 50
        memory = 256
      }
    }
  }
}
`, base)
	alloc := runJobFile(t, p1, job, "running")
	c := p1.client()
	waitLog(t, c, alloc.ID, "started", 1)
	jvm := taskProcs()[alloc.ID]
	if len(jvm) != 1 {
		t.Fatalf("the task's JVM not found: %v", jvm)
	}
	if entries, _ := os.ReadDir(filepath.Join(data, "java")); len(entries) != 1 {
		t.Fatalf("the task's container state is not under the data dir's java/: %v", entries)
	}
	_ = p1.cmd.Process.Signal(syscall.SIGKILL)
	<-p1.done
	if !processAlive(jvm[0]) {
		t.Fatalf("the agent's SIGKILL killed the JVM %d", jvm[0])
	}

	p2 := startAgentProc(t, "second", httpAddr, args...)
	p2.waitNodeReady(1)
	c = p2.client()
	waitReattached(t, c, alloc.ID, nil)
	if !processAlive(jvm[0]) {
		t.Fatalf("the JVM %d died across the restart", jvm[0])
	}
	if log := taskLog(t, c, alloc.ID, "app"); strings.Count(log, "started") != 1 {
		t.Fatalf("the task started again: %q", log)
	}
	if _, err := c.Jobs().Deregister(ctx(t), "jvm-survivor", false); err != nil {
		t.Fatal(err)
	}
	waitLog(t, c, alloc.ID, "stopping", 1)
	eventually(t, 30*time.Second, "the re-attached JVM stopped and its state removed", func() error {
		if pids := taskProcs()[alloc.ID]; len(pids) > 0 {
			return fmt.Errorf("still running: %v", pids)
		}
		if entries, _ := os.ReadDir(filepath.Join(data, "java")); len(entries) > 0 {
			return fmt.Errorf("state left: %v", entries)
		}
		return nil
	})
}
