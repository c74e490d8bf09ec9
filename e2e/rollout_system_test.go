package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// TestSystemJobRollout: a system job runs one alloc on each of three
// nodes (a dev agent and two client-only agents); a destructive change
// (a new env value) rolls across the nodes in health-gated batches of
// max_parallel = 1, so at no moment is more than one node without a
// healthy running alloc of either version, and the deployment ends
// successful with every node running exactly one alloc of the new
// version.
func TestSystemJobRollout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three agent processes and real tasks")
	}
	t.Parallel()

	dev := startDevAgent(t)
	c := dev.client()
	dir := t.TempDir()
	var clients []*agentProc
	for _, name := range []string{"c1", "c2"} {
		httpAddr := loopback.Addr(t)
		dataDir := filepath.Join(dir, name)
		// Client-only agents leave their tasks running when they exit:
		// whatever is left under their data directory is killed at the end.
		endTasksUnder(t, dataDir)
		clients = append(clients, startAgentProc(t, name, httpAddr, "-client",
			"-servers", dev.httpAddr, "-data-dir", dataDir, "-http-addr", httpAddr,
			"-node", name, "-log-level", "debug"))
	}
	dev.waitNodeReady(3)

	const maxParallel = 1
	s := systemSpec{ID: "sysroll", MaxParallel: maxParallel, Version: "1"}
	// Runs before the agents are killed (cleanups run last-in first-out).
	stopJobProcs(t, c, s.ID)

	s.run(t, c)
	nodes := nodeIDs(t, c)
	if len(nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(nodes))
	}
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	eventually(t, 60*time.Second, "one running alloc of version 0 on every node", func() error {
		return onePerNode(allocsOf(t, c, s.ID), nodes, 0)
	})

	sm := sampleNodes(t, c, s.ID, nodes, 1)
	s.Version = "2"
	s.run(t, c)
	d := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	sm.stop()
	t.Logf("%d samples; at most %d node(s) in transition and %d new alloc(s) of unknown health at once (%s)",
		sm.samples, sm.worst, sm.worstIn, sm.worstAt)
	if sm.samples < 5 {
		t.Fatalf("only %d samples during the rollout", sm.samples)
	}
	if sm.worst > maxParallel {
		t.Errorf("%d nodes without a healthy running alloc at once, more than max_parallel %d: %s",
			sm.worst, maxParallel, sm.worstAt)
	}
	if sm.worstIn > maxParallel {
		t.Errorf("%d new allocs of unknown health at once, more than max_parallel %d", sm.worstIn, maxParallel)
	}
	if !sm.sawTransition {
		t.Error("never saw a node in transition: the new version was not rolled out node by node")
	}
	if d.Status != structs.DeploymentStatusSuccessful {
		t.Errorf("deployment %s", jsonString(d))
	}
	if st := d.TaskGroups["web"]; st == nil || st.DesiredTotal != 3 || st.HealthyAllocs < 3 {
		t.Errorf("deployment's group state: %s", jsonString(d.TaskGroups))
	}
	eventually(t, 60*time.Second, "exactly one running alloc of version 1 on every node", func() error {
		allocs := allocsOf(t, c, s.ID)
		if err := onePerNode(allocs, nodes, 1); err != nil {
			return err
		}
		if n := countAllocs(allocs, 0, nil); n != 0 {
			return fmt.Errorf("%d allocs of version 0 still wanted running", n)
		}
		return allHaveProcesses(runningAllocs(allocs, 1))
	})

	// Stop the job and wait for its tasks to end before stopping the
	// agents, so that no task outlives the test.
	if _, err := c.Jobs().Deregister(ctx(t), s.ID, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the job's allocs to finish", func() error {
		allocs := allocsOf(t, c, s.ID)
		procs := taskProcs()
		for _, a := range allocs {
			if a.ClientStatus == structs.AllocClientStatusPending || a.ClientStatus == structs.AllocClientStatusRunning {
				return fmt.Errorf("alloc %s on %s is %s", a.ID[:8], a.NodeName, a.ClientStatus)
			}
			if len(procs[a.ID]) > 0 {
				return fmt.Errorf("alloc %s on %s still has processes %v", a.ID[:8], a.NodeName, procs[a.ID])
			}
		}
		return nil
	})
	for _, cl := range clients {
		if code := cl.interrupt(); code != 0 {
			t.Errorf("%s exited %d after SIGINT", cl.name, code)
		}
	}
	if code := dev.interrupt(); code != 0 {
		t.Errorf("dev agent exited %d after SIGINT", code)
	}
}

// systemSpec is one version of a system job: a raw_exec sleep on every
// node, rolled out with a task_states health check.
type systemSpec struct {
	ID          string
	MaxParallel int
	Version     string // VERSION in the task's env: a new value is a new version
}

func (s systemSpec) hcl() string {
	return fmt.Sprintf(`job %q {
  type = "system"
  group "web" {
    update {
      max_parallel = %d
%s
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec sleep 3600"]
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
`, s.ID, s.MaxParallel, fastUpdate, s.Version)
}

// run parses the spec as `drover job run` would and registers it.
func (s systemSpec) run(t testing.TB, c *apiclient.Client) {
	t.Helper()
	job, _, err := jobspec.Parse(s.ID+".hcl", []byte(s.hcl()), jobspec.Options{})
	if err != nil {
		t.Fatalf("parsing %s:\n%s\n%v", s.ID, s.hcl(), err)
	}
	registerJob(t, c, job)
}

// nodeIDs returns the ready nodes' IDs by name.
func nodeIDs(t testing.TB, c *apiclient.Client) map[string]string {
	t.Helper()
	list, _, err := c.Nodes().List(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range list {
		if n.Status == structs.NodeStatusReady {
			out[n.ID] = n.Name
		}
	}
	return out
}

// onePerNode checks that every node has exactly one alloc of version that
// the servers want running and the client reports running, and that no
// alloc of the job is wanted running anywhere else.
func onePerNode(allocs []*structs.AllocationListStub, nodes map[string]string, version uint64) error {
	per := map[string]int{}
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		if _, ok := nodes[a.NodeID]; !ok {
			return fmt.Errorf("alloc %s on unknown node %s", a.ID[:8], a.NodeID)
		}
		if a.JobVersion == version && running(a) {
			per[a.NodeID]++
		}
	}
	for id, name := range nodes {
		if per[id] != 1 {
			return fmt.Errorf("node %s has %d running allocs of version %d: %s", name, per[id], version, jsonString(allocs))
		}
	}
	return nil
}

// nodeSampler lists a job's allocs every 50ms during a rollout to
// newVersion and records the most nodes at once that had no healthy
// running alloc (neither a running alloc of an older version still wanted
// running nor a running new one known healthy), and the most new allocs
// wanted running whose health was not yet known.
type nodeSampler struct {
	stopCh        chan struct{}
	done          chan struct{}
	mu            sync.Mutex
	samples       int
	worst         int
	worstAt       string
	worstIn       int
	sawTransition bool
}

func sampleNodes(t testing.TB, c *apiclient.Client, jobID string, nodes map[string]string, newVersion uint64) *nodeSampler {
	s := &nodeSampler{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stopCh:
				return
			case <-time.After(50 * time.Millisecond):
			}
			allocs, err := jobAllocs(t, c, jobID)
			if err != nil {
				continue
			}
			serving := map[string]bool{}
			unknown := 0
			var states []string
			for _, a := range allocs {
				if a.DesiredStatus != structs.AllocDesiredStatusRun {
					continue
				}
				states = append(states, fmt.Sprintf("%s v%d %s healthy=%t", nodes[a.NodeID], a.JobVersion, a.ClientStatus, healthy(a)))
				if a.JobVersion == newVersion && !healthy(a) {
					unknown++
				}
				if running(a) && (a.JobVersion < newVersion || healthy(a)) {
					serving[a.NodeID] = true
				}
			}
			sort.Strings(states)
			var down []string
			for id, name := range nodes {
				if !serving[id] {
					down = append(down, name)
				}
			}
			sort.Strings(down)
			s.mu.Lock()
			s.samples++
			if len(down) > 0 {
				s.sawTransition = true
			}
			if len(down) > s.worst {
				s.worst = len(down)
				s.worstAt = "down: " + strings.Join(down, ",") + "; wanted running: " + strings.Join(states, ", ")
			}
			s.worstIn = max(s.worstIn, unknown)
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *nodeSampler) stop() {
	close(s.stopCh)
	<-s.done
}
