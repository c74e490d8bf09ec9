package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// execRolloutJob is a service job of count exec tasks, each a busybox
// shell that prints its VERSION and its user, then waits (trapping
// SIGTERM, as an init must). command is the task's command ("/bin/busybox"
// but for a version that cannot start).
func execRolloutJob(t *testing.T, id, version, command string) *structs.Job {
	t.Helper()
	src := fmt.Sprintf(`job %q {
  datacenters = ["dc1"]
  group "web" {
    count = 3
    update {
      max_parallel      = 1
      canary            = 1
      auto_promote      = true
      auto_revert       = true
      health_check      = "task_states"
      min_healthy_time  = "1s"
      healthy_deadline  = "20s"
      progress_deadline = "30s"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "app" {
      driver       = "exec"
      kill_timeout = "2s"
      config {
        command = %q
        args    = ["sh", "-c", "trap 'exit 0' TERM; echo version=$VERSION uid=$(id -u); while :; do sleep 1 & wait; done"]
      }
      env {
        VERSION = %q
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, command, version)
	path := t.TempDir() + "/" + id + ".hcl"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return parseJob(t, path)
}

// TestExecJobRollsOutAndReverts rolls an exec job out on a dev agent:
// version 1 (a new env) goes out through a canary, auto-promoted, one
// alloc at a time; the deployment succeeds, every alloc runs version 1
// isolated, and the old tasks' processes and cgroups are gone. Then
// version 2, whose command does not exist in the task's root, fails its
// canary: the deployment fails with the driver's reason in a task event
// and the job reverts to version 1 (as version 3), still exec, still
// isolated.
func TestExecJobRollsOutAndReverts(t *testing.T) {
	requireIsolation(t)
	p := startDevAgent(t)
	c := p.client()
	const id = "exec-roll"
	stopJobProcs(t, c, id)

	registerJob(t, c, execRolloutJob(t, id, "a", "/bin/busybox"))
	waitRollout(t, c, id, 0, structs.DeploymentStatusSuccessful, 30*time.Second)
	first := runningAllocs(allocsOf(t, c, id), 0)
	if len(first) != 3 {
		t.Fatalf("%d allocs of version 0 running", len(first))
	}
	checkExecAllocs(t, c, first, "a")

	s := sampleAvailability(t, c, id, 3, 1)
	registerJob(t, c, execRolloutJob(t, id, "b", "/bin/busybox"))
	d := waitRollout(t, c, id, 1, structs.DeploymentStatusSuccessful, 40*time.Second)
	if s.stop(); s.samples == 0 || s.worstIn > 1 || s.worstDown > 1 {
		t.Errorf("%d samples: at most %d new allocs not yet healthy and %d slots not served at once, max_parallel is 1",
			s.samples, s.worstIn, s.worstDown)
	}
	if st := d.TaskGroups["web"]; st == nil || !st.Promoted || st.DesiredCanaries != 1 || st.HealthyAllocs != 3 {
		t.Errorf("the deployment's group: %s", jsonString(st))
	}
	var second []string
	eventually(t, 20*time.Second, "version 1 everywhere, version 0's tasks gone", func() error {
		allocs := allocsOf(t, c, id)
		second = runningAllocs(allocs, 1)
		if len(second) != 3 || countAllocs(allocs, 0, nil) != 0 {
			return fmt.Errorf("allocs %s", jsonString(allocs))
		}
		return execAllocsGone(first)
	})
	checkExecAllocs(t, c, second, "b")

	// Version 2 cannot start: its canary fails, the deployment fails and
	// the job goes back to version 1's task, as version 3.
	registerJob(t, c, execRolloutJob(t, id, "c", "/no/such/command"))
	failed := versionDeployment(t, c, id, 2, structs.DeploymentStatusFailed, 40*time.Second)
	if want := structs.DeploymentStatusDescriptionFailedAllocations + " - rolling back to job version 1"; failed.StatusDescription != want {
		t.Errorf("the failed deployment says %q, want %q", failed.StatusDescription, want)
	}
	var canary *structs.Allocation
	for _, a := range allocsOf(t, c, id) {
		if a.JobVersion == 2 {
			full, _, err := c.Allocations().Info(ctx(t), a.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			canary = full
		}
	}
	if canary == nil {
		t.Fatal("version 2 placed no alloc")
	}
	if !execTaskEvent(canary, structs.TaskDriverFailure, "/no/such/command") {
		t.Errorf("the canary's events do not give the reason: %s", jsonString(canary.TaskStates))
	}
	job, _, err := c.Jobs().Info(ctx(t), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if job.Version != 3 || job.TaskGroups[0].Tasks[0].Driver != "exec" || job.TaskGroups[0].Tasks[0].Env["VERSION"] != "b" {
		t.Fatalf("the job did not revert to version 1: version %d, task %s", job.Version, jsonString(job.TaskGroups[0].Tasks[0]))
	}
	// Version 3 has version 1's task: its allocs are kept, updated in place.
	waitRollout(t, c, id, 3, structs.DeploymentStatusSuccessful, 30*time.Second)
	eventually(t, 20*time.Second, "version 3 running everywhere, the canary's cgroup gone", func() error {
		allocs := allocsOf(t, c, id)
		if n := len(runningAllocs(allocs, 3)); n != 3 {
			return fmt.Errorf("%d of version 3 running: %s", n, jsonString(allocs))
		}
		return execAllocsGone([]string{canary.ID})
	})
	checkExecAllocs(t, c, runningAllocs(allocsOf(t, c, id), 3), "b")
}

// checkExecAllocs checks that each alloc's task printed version and runs
// isolated: its processes are not root, and it has a memory cgroup.
func checkExecAllocs(t *testing.T, c *apiclient.Client, ids []string, version string) {
	t.Helper()
	procs := taskProcs()
	for _, id := range ids {
		eventually(t, 10*time.Second, "the task's output", func() error {
			if out := taskLog(t, c, id, "app"); !strings.Contains(out, "version="+version+" uid=65534\n") {
				return fmt.Errorf("alloc %s printed %q", id, out)
			}
			return nil
		})
		if len(procs[id]) == 0 {
			t.Errorf("alloc %s has no process", id)
		}
		for _, pid := range procs[id] {
			if uid := procUID(pid); uid == 0 {
				t.Errorf("alloc %s's process %d runs as root", id, pid)
			}
		}
		if len(execCgroups(id)) == 0 {
			t.Errorf("alloc %s's task has no cgroup", id)
		}
	}
}

// execAllocsGone reports an alloc of ids that still has a process or a
// cgroup.
func execAllocsGone(ids []string) error {
	procs := taskProcs()
	for _, id := range ids {
		if len(procs[id]) > 0 {
			return fmt.Errorf("alloc %s still has processes %v", id, procs[id])
		}
		if cg := execCgroups(id); len(cg) > 0 {
			return fmt.Errorf("alloc %s's cgroups are still there: %v", id, cg)
		}
	}
	return nil
}

// execCgroups lists the cgroups of alloc's task "app" that exist (v1's
// memory hierarchy, or v2's unified one).
func execCgroups(alloc string) []string {
	var out []string
	for _, cg := range []string{"/sys/fs/cgroup/memory/drover/" + alloc + ".app", "/sys/fs/cgroup/drover/" + alloc + ".app"} {
		if _, err := os.Stat(cg); err == nil {
			out = append(out, cg)
		}
	}
	return out
}

// procUID is pid's real user ID (-1 if unknown).
func procUID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if n, err := strconv.Atoi(f[0]); err == nil {
					return n
				}
			}
		}
	}
	return -1
}

// execTaskEvent reports whether alloc's task "app" has an event of type
// whose message mentions text.
func execTaskEvent(a *structs.Allocation, typ, text string) bool {
	st := a.TaskStates["app"]
	if st == nil {
		return false
	}
	for _, ev := range st.Events {
		if ev.Type == typ && (strings.Contains(ev.DisplayMessage, text) || strings.Contains(ev.Extra().DriverError, text)) {
			return true
		}
	}
	return false
}
