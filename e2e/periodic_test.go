package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/structs"
)

func periodicHCL(id, cron, script string, overlap bool) string {
	return fmt.Sprintf(`job %q {
  type = "batch"
  periodic {
    crons            = [%q]
    prohibit_overlap = %t
  }
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, cron, overlap, script)
}

// children lists a periodic job's launched children (by ParentID).
func periodicChildren(t *testing.T, nc *nomad.Client, parent string) []*nomad.JobListStub {
	t.Helper()
	stubs, _, err := nc.Jobs().PrefixList(parent + structs.PeriodicLaunchSuffix)
	if err != nil {
		t.Fatal(err)
	}
	var out []*nomad.JobListStub
	for _, s := range stubs {
		if s.ParentID == parent {
			out = append(out, s)
		}
	}
	return out
}

// TestPeriodicJobsLaunchOnSchedule runs periodic batch jobs on a dev agent
// with real raw_exec tasks: children are launched on the cron schedule,
// named as Nomad names them, run to completion and are counted in the
// parent's summary; prohibit_overlap holds launches while a child runs;
// force launches at once; a stopped parent launches nothing more; a
// five-field minute cron launches at the next minute.
func TestPeriodicJobsLaunchOnSchedule(t *testing.T) {
	p := startDevAgent(t)
	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + p.httpAddr})
	if err != nil {
		t.Fatal(err)
	}
	// Kill what the children's allocs left, so that a failed test leaks no
	// process (cleanups run last-registered first: this one runs while the
	// agent still answers).
	c := p.client()
	t.Cleanup(func() {
		for _, parent := range []string{"tick", "long"} {
			for _, child := range periodicChildren(t, nc, parent) {
				if allocs, err := jobAllocs(t, c, child.ID); err == nil {
					for _, a := range allocs {
						killAllocProcs(a.ID)
					}
				}
			}
		}
	})
	dir := t.TempDir()
	// A plain five-field cron, as users write them: its first launch comes
	// at the next minute, checked at the end of the test.
	minutePath := filepath.Join(dir, "minute.hcl")
	if err := os.WriteFile(minutePath, []byte(periodicHCL("minute", "* * * * *", "echo minute", false)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := p.cli(t, "job", "run", minutePath); err != nil {
		t.Fatalf("job run of a minute cron: %v\n%s", err, out)
	}
	minuteRegistered := time.Now()
	path := filepath.Join(dir, "tick.hcl")
	if err := os.WriteFile(path, []byte(periodicHCL("tick", "*/2 * * * * * *", "echo tick", false)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := p.cli(t, "job", "run", path)
	if err != nil || !strings.Contains(out, "Job registration successful") || !strings.Contains(out, "Approximate next launch time") {
		t.Fatalf("job run of a periodic job: %v\n%s", err, out)
	}
	eventually(t, 45*time.Second, "two finished children", func() error {
		dead := 0
		for _, c := range periodicChildren(t, nc, "tick") {
			if c.Status == "dead" {
				dead++
			}
		}
		if dead < 2 {
			return fmt.Errorf("%d dead children", dead)
		}
		return nil
	})
	sum, _, err := nc.Jobs().Summary("tick", nil)
	if err != nil || sum.Children == nil || sum.Children.Dead < 2 {
		t.Fatalf("parent summary: %v %+v", err, sum)
	}
	job, _, err := nc.Jobs().Info("tick", nil)
	if err != nil || job.Periodic == nil || *job.Status != "running" || !job.IsPeriodic() {
		t.Fatalf("parent job: %v %+v", err, job)
	}
	out, err = p.cli(t, "job", "status", "tick")
	if err != nil || !strings.Contains(out, "Periodic") || !strings.Contains(out, "Next Periodic Launch") ||
		!strings.Contains(out, "Previously Launched Jobs") || !strings.Contains(out, "tick/periodic-") {
		t.Fatalf("job status of a periodic job: %v\n%s", err, out)
	}

	// Stopped: no launch after the children already there.
	if out, err := p.cli(t, "job", "stop", "-detach", "tick"); err != nil {
		t.Fatalf("job stop: %v\n%s", err, out)
	}
	before := len(periodicChildren(t, nc, "tick"))
	time.Sleep(4 * time.Second)
	if after := len(periodicChildren(t, nc, "tick")); after != before {
		t.Fatalf("a stopped periodic job launched: %d -> %d children", before, after)
	}

	// prohibit_overlap: a child that runs on holds the next launches.
	path = filepath.Join(dir, "long.hcl")
	if err := os.WriteFile(path, []byte(periodicHCL("long", "*/2 * * * * * *", "exec sleep 600", true)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := p.cli(t, "job", "run", path); err != nil {
		t.Fatalf("job run: %v\n%s", err, out)
	}
	eventually(t, 30*time.Second, "a running child", func() error {
		for _, c := range periodicChildren(t, nc, "long") {
			if c.Status == "running" {
				return nil
			}
		}
		return fmt.Errorf("no running child")
	})
	time.Sleep(5 * time.Second) // two more launch times pass
	if n := len(periodicChildren(t, nc, "long")); n != 1 {
		t.Fatalf("prohibit_overlap launched %d children beside a running one", n)
	}
	// force launches anyway, through the official client.
	if _, _, err := nc.Jobs().PeriodicForce("long", nil); err != nil {
		t.Fatalf("periodic force: %v", err)
	}
	if n := len(periodicChildren(t, nc, "long")); n != 2 {
		t.Fatalf("force: %d children", n)
	}
	out, err = p.cli(t, "job", "periodic", "force", "-detach", "rolling-nope")
	if err == nil || !strings.Contains(out, `No job(s) with prefix or id "rolling-nope" found`) {
		t.Fatalf("force of an unknown job: %v\n%s", err, out)
	}

	// The minute cron launched once, at the first minute after it was
	// registered, and its child ran to completion.
	var child *nomad.JobListStub
	eventually(t, time.Until(minuteRegistered.Add(90*time.Second)), "the minute cron's child done", func() error {
		kids := periodicChildren(t, nc, "minute")
		if len(kids) == 0 {
			return fmt.Errorf("no child")
		}
		if child = kids[0]; child.Status != "dead" {
			return fmt.Errorf("child %s %s", child.ID, child.Status)
		}
		return nil
	})
	var launched int64
	if _, err := fmt.Sscanf(child.ID, "minute"+structs.PeriodicLaunchSuffix+"%d", &launched); err != nil {
		t.Fatalf("child named %q: %v", child.ID, err)
	}
	at := time.Unix(launched, 0)
	if launched%60 != 0 || !at.After(minuteRegistered.Add(-time.Second)) || at.After(minuteRegistered.Add(61*time.Second)) {
		t.Fatalf("the minute cron registered at %s launched %s (%s)", minuteRegistered.Format(time.TimeOnly), child.ID, at.Format(time.TimeOnly))
	}
	if kids := periodicChildren(t, nc, "minute"); len(kids) != 1 && time.Since(at) < 59*time.Second {
		t.Fatalf("the minute cron launched %d children within a minute", len(kids))
	}
}
