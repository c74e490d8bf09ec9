package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// TestMaxRunDuration: on a dev agent, a batch job whose task would run
// ten minutes is stopped at its group's max_run_duration: the allocation
// completes with Nomad's description, its task killed with the reason,
// and nothing replaces it.
func TestMaxRunDuration(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	const id = "maxrun"
	src := `job "maxrun" {
  type = "batch"
  group "work" {
    max_run_duration = "2s"
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec sleep 600"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`
	stopJobProcs(t, c, id)
	job, _, err := jobspec.Parse(id+".hcl", []byte(src), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, c, job)
	var done *structs.AllocationListStub
	eventually(t, 60*time.Second, "the alloc stopped at max_run_duration", func() error {
		allocs := allocsOf(t, c, id)
		if len(allocs) != 1 {
			return fmt.Errorf("%d allocs", len(allocs))
		}
		if a := allocs[0]; a.ClientStatus != structs.AllocClientStatusComplete {
			return fmt.Errorf("status %s", a.ClientStatus)
		}
		done = allocs[0]
		return nil
	})
	if done.ClientDescription != structs.AllocMaxRunDurationExceeded {
		t.Fatalf("description %q", done.ClientDescription)
	}
	st := done.TaskStates["main"]
	found := false
	for _, e := range st.Events {
		found = found || e.Type == structs.TaskKilling && e.KillReason == structs.AllocMaxRunDurationExceeded
	}
	if !found || st.Failed {
		t.Fatalf("task state failed=%v events %+v", st.Failed, st.Events)
	}
	time.Sleep(2 * time.Second) // a reschedule, were there one, would follow at once
	if n := len(allocsOf(t, c, id)); n != 1 {
		t.Fatalf("%d allocs: the stopped one was replaced", n)
	}
}
