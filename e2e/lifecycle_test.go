package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// lifecycleHCL is a service job with a prestart task, a poststart sidecar,
// a main task and a poststop task, all raw_exec. Each appends "NAME
// NANOSECONDS" to order in the allocation's shared directory; the main
// task first prints that directory, so that the test can read the file.
func lifecycleHCL(version string) string {
	mark := func(name string) string {
		return fmt.Sprintf(`echo "%s $(date +%%s%%N)" >> "$NOMAD_ALLOC_DIR/order"`, name)
	}
	task := func(name, lifecycle, script string) string {
		return fmt.Sprintf(`    task %q {
      driver = "raw_exec"
%s
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      env { VERSION = %q }
      resources {
        cpu    = 20
        memory = 32
      }
    }
`, name, lifecycle, script, version)
	}
	return `job "life" {
  group "web" {
    update {
      health_check      = "task_states"
      min_healthy_time  = "1s"
      healthy_deadline  = "30s"
      progress_deadline = "1m"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
` + task("init", `      lifecycle { hook = "prestart" }`, mark("init")+"; sleep 1") +
		task("side", "      lifecycle {\n        hook    = \"poststart\"\n        sidecar = true\n      }", mark("side")+"; exec sleep 600") +
		task("main", "", `echo "$NOMAD_ALLOC_DIR"; `+mark("main")+"; exec sleep 600") +
		task("cleanup", `      lifecycle { hook = "poststop" }`, mark("cleanup")) + `  }
}
`
}

// TestLifecycleRawExec: on a dev agent, the prestart task runs to
// completion before the main task starts, the poststart sidecar starts
// after it; a second version rolls out, and the first allocation's main
// task, then its sidecar, are stopped before its poststop task runs.
// The order is read from the task events and from the file the tasks
// write.
func TestLifecycleRawExec(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a dev agent and real processes")
	}
	t.Parallel()
	p := startDevAgent(t)
	c := p.client()
	stopJobProcs(t, c, "life")

	job, _, err := jobspec.Parse("life.hcl", []byte(lifecycleHCL("1")), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, c, job)
	waitRollout(t, c, "life", 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	allocs := allocsOf(t, c, "life")
	if len(allocs) != 1 {
		t.Fatalf("allocs %s", jsonString(allocs))
	}
	old := allocs[0].ID
	a := allocInfo(t, c, old)
	if a.ClientStatus != structs.AllocClientStatusRunning {
		t.Fatalf("alloc %s", a.ClientStatus)
	}
	ts := a.TaskStates
	// init completed, successfully; main and side run; cleanup waits.
	if s := ts["init"]; s == nil || s.State != structs.TaskStateDead || s.Failed {
		t.Fatalf("init %s", jsonString(s))
	}
	if s := ts["cleanup"]; s == nil || s.State != structs.TaskStatePending || !hasEvent(s, structs.TaskHookWaiting, structs.TaskWaitingMainStop) {
		t.Fatalf("cleanup %s", jsonString(s))
	}
	if !hasEvent(ts["main"], structs.TaskHookWaiting, structs.TaskWaitingPrestart) || !hasEvent(ts["side"], structs.TaskHookWaiting, structs.TaskWaitingMain) {
		t.Fatalf("no waiting events: main %s side %s", jsonString(ts["main"]), jsonString(ts["side"]))
	}
	inOrder(t, ts, []taskEvent{
		{"init", structs.TaskTerminated}, {"main", structs.TaskStarted}, {"side", structs.TaskStarted},
	})
	// alloc status names each task's hook, as Nomad's.
	out, err := p.cli(t, "alloc", "status", old)
	if err != nil || !strings.Contains(out, `Task "side" (poststart sidecar) is "running"`) ||
		!strings.Contains(out, `Task "init" (prestart) is "dead"`) || !strings.Contains(out, `Task "main" is "running"`) {
		t.Fatalf("alloc status: %v\n%s", err, out)
	}
	dir := allocSharedDir(t, c, old)
	// init wrote first; main and the sidecar both after it, in either
	// order: a poststart task starts once main has started, not once
	// main's first line has run.
	at := marks(t, dir, "init", "main", "side")
	if at["main"] < at["init"] || at["side"] < at["init"] {
		t.Fatalf("order file: %v", at)
	}

	// Version 2: the old allocation is stopped; its poststop task runs
	// after its main task and its sidecar are dead.
	job2, _, err := jobspec.Parse("life.hcl", []byte(lifecycleHCL("2")), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, c, job2)
	waitRollout(t, c, "life", 1, structs.DeploymentStatusSuccessful, 90*time.Second)
	eventually(t, 30*time.Second, "old alloc complete", func() error {
		a = allocInfo(t, c, old)
		if a.ClientStatus != structs.AllocClientStatusComplete {
			return fmt.Errorf("old alloc %s: %s", a.ClientStatus, jsonString(a.TaskStates))
		}
		return nil
	})
	ts = a.TaskStates
	if s := ts["cleanup"]; s.State != structs.TaskStateDead || s.Failed || !hasEvent(s, structs.TaskStarted, "") {
		t.Fatalf("cleanup %s", jsonString(s))
	}
	if !hasEvent(ts["side"], structs.TaskMainDead, "") {
		t.Fatalf("side not stopped as a sidecar: %s", jsonString(ts["side"]))
	}
	inOrder(t, ts, []taskEvent{
		{"main", structs.TaskKilled}, {"side", structs.TaskKilling}, {"side", structs.TaskKilled}, {"cleanup", structs.TaskStarted},
	})
	at = marks(t, dir, "init", "main", "side", "cleanup")
	if at["cleanup"] < at["main"] || at["cleanup"] < at["side"] {
		t.Fatalf("order file: %v", at)
	}
	// The file's times agree with the events: cleanup wrote after the
	// sidecar was killed.
	if killed := eventTime(t, ts["side"], structs.TaskKilled); at["cleanup"] < killed {
		t.Fatalf("cleanup wrote at %d, before the sidecar was killed at %d", at["cleanup"], killed)
	}
	// main started only once the client had recorded init's end, and the
	// sidecar once it had recorded main's start.
	if init := eventTime(t, ts["init"], structs.TaskTerminated); at["main"] < init {
		t.Fatalf("main wrote at %d, before init's end was recorded at %d", at["main"], init)
	}
	if started := eventTime(t, ts["main"], structs.TaskStarted); at["side"] < started {
		t.Fatalf("side wrote at %d, before main's start was recorded at %d", at["side"], started)
	}
	// The new allocation went through the same order.
	for _, na := range allocsOf(t, c, "life") {
		if na.ID != old {
			inOrder(t, allocInfo(t, c, na.ID).TaskStates, []taskEvent{
				{"init", structs.TaskTerminated}, {"main", structs.TaskStarted}, {"side", structs.TaskStarted},
			})
		}
	}
}

func allocInfo(t *testing.T, c *apiclient.Client, id string) *structs.Allocation {
	t.Helper()
	a, _, err := c.Allocations().Info(ctx(t), id, nil)
	if err != nil {
		t.Fatalf("alloc %s: %v", id, err)
	}
	return a
}

// allocSharedDir reads the allocation's shared directory from the main
// task's first line of output.
func allocSharedDir(t *testing.T, c *apiclient.Client, id string) string {
	t.Helper()
	var dir string
	eventually(t, 20*time.Second, "main's output", func() error {
		rc, err := c.AllocLogs(ctx(t), id, apiclient.LogsOptions{Task: "main"})
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		first, _, ok := strings.Cut(string(b), "\n")
		if !ok || !filepath.IsAbs(first) {
			return fmt.Errorf("output %q", b)
		}
		dir = first
		return nil
	})
	return dir
}

// marks reads the file the tasks write, one line "NAME UNIXNANO" each,
// and returns when each wrote; it fails unless exactly the names given
// wrote, once each.
func marks(t *testing.T, dir string, want ...string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "order"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		name, ts, _ := strings.Cut(l, " ")
		at, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			t.Fatalf("order line %q: %v", l, err)
		}
		if _, dup := out[name]; dup {
			t.Fatalf("%s wrote twice: %q", name, b)
		}
		out[name] = at
	}
	if len(out) != len(want) {
		t.Fatalf("order file %q, want one line from each of %v", b, want)
	}
	for _, n := range want {
		if _, ok := out[n]; !ok {
			t.Fatalf("order file %q: nothing from %s", b, n)
		}
	}
	return out
}

// hasEvent reports whether st has an event of type typ (and message msg,
// unless empty).
func hasEvent(st *structs.TaskState, typ, msg string) bool {
	if st == nil {
		return false
	}
	for _, e := range st.Events {
		if e.Type == typ && (msg == "" || e.DisplayMessage == msg || e.Message == msg) {
			return true
		}
	}
	return false
}

type taskEvent struct{ task, typ string }

func eventTime(t *testing.T, st *structs.TaskState, typ string) int64 {
	t.Helper()
	if st != nil {
		for _, e := range st.Events {
			if e.Type == typ {
				return e.Time
			}
		}
	}
	t.Fatalf("no %q event in %s", typ, jsonString(st))
	return 0
}

// inOrder checks that the events happened in the order given (by their
// times; equal times pass).
func inOrder(t *testing.T, states map[string]*structs.TaskState, order []taskEvent) {
	t.Helper()
	var prev int64
	for i, e := range order {
		at := eventTime(t, states[e.task], e.typ)
		if i > 0 && at < prev {
			t.Fatalf("%s %q at %d comes before %s %q at %d: %s", e.task, e.typ, at, order[i-1].task, order[i-1].typ, prev, jsonString(states))
		}
		prev = at
	}
}
