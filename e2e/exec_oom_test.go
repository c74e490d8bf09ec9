package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// TestExecTaskOOMKilled runs an exec task of 32 MB that reads 256 MB into
// one buffer on a dev agent: the kernel's OOM killer ends it, the task's
// Terminated event says so as Nomad's exec driver's does (exit code 137,
// signal 9, details oom_killed=true — the exit message "OOM Killed" is
// the docker driver's —, read from GET /v1/allocation/:id as served), and
// the restart policy applies: one
// restart, then the task fails and so does its allocation.
func TestExecTaskOOMKilled(t *testing.T) {
	requireIsolation(t)
	p := startDevAgent(t)
	c := p.client()
	const job = `job "exec-oom" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    reschedule {
      attempts  = 0
      unlimited = false
    }
    restart {
      attempts = 1
      delay    = "1s"
      interval = "1m"
      mode     = "fail"
    }
    task "app" {
      driver = "exec"
      config {
        command = "/bin/busybox"
        args    = ["sh", "-c", "echo start; exec dd if=/dev/zero of=/dev/null bs=256M count=1"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`
	alloc := runJobFile(t, p, job, structs.AllocClientStatusFailed)

	// The events as the API serves them, field names included.
	var got struct {
		ClientStatus string
		TaskStates   map[string]struct {
			State    string
			Failed   bool
			Restarts int
			Events   []map[string]any
		}
	}
	if _, err := c.Get(ctx(t), "/v1/allocation/"+alloc.ID, nil, &got); err != nil {
		t.Fatal(err)
	}
	st, ok := got.TaskStates["app"]
	if !ok || st.State != structs.TaskStateDead || !st.Failed || st.Restarts != 1 {
		t.Fatalf("task state %s", jsonString(got.TaskStates))
	}
	var types []string
	ooms := 0
	for _, ev := range st.Events {
		typ, _ := ev["Type"].(string)
		types = append(types, typ)
		if typ != structs.TaskTerminated {
			continue
		}
		details, _ := ev["Details"].(map[string]any)
		if ev["ExitCode"] != float64(137) || ev["Signal"] != float64(9) || details["oom_killed"] != "true" ||
			ev["DisplayMessage"] != "Exit Code: 137, Signal: 9" {
			t.Errorf("the Terminated event is not an OOM kill: %s", jsonString(ev))
		}
		ooms++
	}
	want := "Received,Task Setup,Started,Terminated,Restarting,Started,Terminated,Not Restarting"
	if strings.Join(types, ",") != want || ooms != 2 {
		t.Fatalf("events %s, want %s", strings.Join(types, ","), want)
	}
	last := st.Events[len(st.Events)-1]
	if reason, _ := last["RestartReason"].(string); !strings.Contains(reason, `Exceeded allowed attempts 1 in interval 1m0s and mode is "fail"`) {
		t.Errorf("the last event: %s", jsonString(last))
	}
	eventually(t, 10*time.Second, "the task's cgroup removed", func() error {
		if cg := execCgroups(alloc.ID); len(cg) > 0 {
			return fmt.Errorf("still there: %v", cg)
		}
		return nil
	})
}
