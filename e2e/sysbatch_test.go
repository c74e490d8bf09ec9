package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// sysbatchHCL is a sysbatch job of two raw_exec groups: "once" records
// each start in a file of marks and exits 0; "fails" records its start
// and exits 1, with one restart allowed.
func sysbatchHCL(id, marks string) string {
	return fmt.Sprintf(`job %q {
  type = "sysbatch"
  group "once" {
    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo run >> %s/once-$NOMAD_ALLOC_ID"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
  group "fails" {
    restart {
      attempts = 1
      delay    = "100ms"
      mode     = "fail"
    }
    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo run >> %s/fails-$NOMAD_ALLOC_ID; exit 1"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, marks, marks)
}

// TestSysbatchRunsOncePerNode: `drover job run` of a sysbatch job on a dev
// agent and a client-only agent runs each group once on both nodes with no
// deployment; the group that exits 0 completes, the one that exits 1 is
// restarted once by its restart policy and then fails, and neither is
// rescheduled nor placed again; the job is then dead, as Nomad reports a
// finished sysbatch job. A node that joins afterwards gets its own run of
// both groups, and the finished allocs of the first two nodes are not run
// again.
func TestSysbatchRunsOncePerNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes and real tasks")
	}
	t.Parallel()

	dev := startDevAgent(t)
	c := dev.client()
	dir := t.TempDir()
	marks := filepath.Join(dir, "marks")
	if err := os.Mkdir(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	startClient := func(name string) *agentProc {
		httpAddr := loopback.Addr(t)
		dataDir := filepath.Join(dir, name)
		endTasksUnder(t, dataDir)
		return startAgentProc(t, name, httpAddr, "-client", "-servers", dev.httpAddr,
			"-data-dir", dataDir, "-http-addr", httpAddr, "-node", name, "-log-level", "debug")
	}
	c1 := startClient("c1")
	dev.waitNodeReady(2)

	const id = "sweep"
	stopJobProcs(t, c, id)
	path := filepath.Join(dir, id+".hcl")
	if err := os.WriteFile(path, []byte(sysbatchHCL(id, marks)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := dev.cli(t, "job", "run", path)
	if err != nil {
		t.Fatalf("drover job run: %v\n%s", err, out)
	}
	if strings.Contains(out, "Deployment") {
		t.Errorf("job run of a sysbatch job followed a deployment:\n%s", out)
	}

	// finished waits until every alloc has finished, and checks that each
	// group ran once on each of nodes.
	finished := func(nodes int) []*structs.AllocationListStub {
		var allocs []*structs.AllocationListStub
		eventually(t, 60*time.Second, fmt.Sprintf("both groups finished on %d nodes", nodes), func() error {
			allocs = allocsOf(t, c, id)
			per := map[string]map[string]int{}
			for _, a := range allocs {
				if a.ClientStatus != structs.AllocClientStatusComplete && a.ClientStatus != structs.AllocClientStatusFailed {
					return fmt.Errorf("alloc %s of %s on %s is %s", a.ID[:8], a.TaskGroup, a.NodeName, a.ClientStatus)
				}
				if per[a.TaskGroup] == nil {
					per[a.TaskGroup] = map[string]int{}
				}
				per[a.TaskGroup][a.NodeID]++
			}
			for _, g := range []string{"once", "fails"} {
				if len(per[g]) != nodes {
					return fmt.Errorf("group %s ran on %d nodes, want %d: %s", g, len(per[g]), nodes, jsonString(allocs))
				}
				for node, n := range per[g] {
					if n != 1 {
						return fmt.Errorf("group %s has %d allocs on node %s", g, n, node)
					}
				}
			}
			return nil
		})
		for _, a := range allocs {
			want, restarts := structs.AllocClientStatusComplete, uint64(0)
			if a.TaskGroup == "fails" {
				want, restarts = structs.AllocClientStatusFailed, 1
			}
			if a.ClientStatus != want {
				t.Errorf("alloc %s of %s on %s is %s, want %s", a.ID[:8], a.TaskGroup, a.NodeName, a.ClientStatus, want)
			}
			if st := a.TaskStates["main"]; st == nil || st.Restarts != restarts {
				t.Errorf("alloc %s of %s: task state %s, want %d restarts", a.ID[:8], a.TaskGroup, jsonString(st), restarts)
			}
			if a.FollowupEvalID != "" || a.NextAllocation != "" || a.DeploymentStatus != nil {
				t.Errorf("alloc %s of %s has a follow-up, a replacement or a deployment status: %s", a.ID[:8], a.TaskGroup, jsonString(a))
			}
		}
		return allocs
	}
	first := finished(2)

	eventually(t, 30*time.Second, "the job to be dead", func() error {
		job, _, err := c.Jobs().Info(ctx(t), id, nil)
		if err != nil {
			return err
		}
		if job.Status != structs.JobStatusDead {
			return fmt.Errorf("job status %q", job.Status)
		}
		return nil
	})
	if deps, _, err := c.Jobs().Deployments(ctx(t), id, true, nil); err != nil || len(deps) != 0 {
		t.Errorf("sysbatch job has deployments %s (err %v)", jsonString(deps), err)
	}

	// A third node joins: it runs both groups; nothing runs again on the
	// first two nodes.
	c2 := startClient("c2")
	dev.waitNodeReady(3)
	all := finished(3)
	seen := map[string]bool{}
	for _, a := range first {
		seen[a.ID] = true
	}
	newOnes := 0
	for _, a := range all {
		if !seen[a.ID] {
			newOnes++
			if a.NodeName != "c2" {
				t.Errorf("new alloc %s of %s on %s, want on the new node c2", a.ID[:8], a.TaskGroup, a.NodeName)
			}
		}
	}
	if newOnes != 2 {
		t.Errorf("%d new allocs after c2 joined, want 2 (one per group)", newOnes)
	}

	// The marks: each "once" alloc started once, each "fails" alloc twice
	// (its first run and its one restart).
	entries, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(marks, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		runs := strings.Count(string(b), "run\n")
		want := 1
		if strings.HasPrefix(e.Name(), "fails-") {
			want = 2
		}
		if runs != want {
			t.Errorf("%s started %d times, want %d", e.Name(), runs, want)
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != 6 {
		t.Errorf("marks of %d allocs, want 6 (2 groups on 3 nodes): %v", len(names), names)
	}

	for _, p := range []*agentProc{c2, c1, dev} {
		if code := p.interrupt(); code != 0 {
			t.Errorf("%s exited %d after SIGINT", p.name, code)
		}
	}
}
