package e2e

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// drainSample watches a drain: every 20ms it counts the job's allocations
// that serve (desired to run, running, and healthy: the replacements count
// once their migrate health check passed) and those on the move (marked
// to migrate, still desired to run), and keeps the worst of each.
type drainSample struct {
	stopCh               chan struct{}
	done                 chan struct{}
	worstDown, maxMoving int
	samples              int
}

func sampleDrain(t testing.TB, c *apiclient.Client, jobID, nodeID string, count int) *drainSample {
	return sampleDrainVia(t, func() *apiclient.Client { return c }, jobID, nodeID, count)
}

// sampleDrainVia is sampleDrain through whichever client api returns at
// each sample (nil: skip it), for a cluster whose servers come and go.
func sampleDrainVia(t testing.TB, api func() *apiclient.Client, jobID, nodeID string, count int) *drainSample {
	s := &drainSample{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stopCh:
				return
			case <-time.After(20 * time.Millisecond):
			}
			c := api()
			if c == nil {
				continue
			}
			allocs, err := jobAllocs(t, c, jobID)
			if err != nil {
				continue
			}
			onNode, _, err := c.Nodes().Allocations(ctx(t), nodeID, nil)
			if err != nil {
				continue
			}
			serving := 0
			for _, a := range allocs {
				if a.DesiredStatus == structs.AllocDesiredStatusRun && running(a) && healthy(a) {
					serving++
				}
			}
			moving := 0
			for _, a := range onNode {
				if a.JobID == jobID && a.DesiredTransition.ShouldMigrate() && a.DesiredStatus == structs.AllocDesiredStatusRun &&
					!a.ClientTerminalStatus() {
					moving++
				}
			}
			s.samples++
			s.worstDown = max(s.worstDown, count-serving)
			s.maxMoving = max(s.maxMoving, moving)
		}
	}()
	return s
}

func (s *drainSample) stop() *drainSample {
	close(s.stopCh)
	<-s.done
	return s
}

// TestNodeDrainMigratesUnderMigrateBlock: one server and two client agents
// run a service group of four real raw_exec tasks (python3's http.server)
// with an http check; `drover node drain -enable` on the node with most of
// them moves them to the other under migrate { max_parallel = 1,
// health_check = "checks" }: never more than one on the move, each
// replacement healthy by its http check before the allocation it replaces
// stops, so that the group never serves fewer than three (in fact never
// fewer than four) at any 20ms sample. The CLI monitors the drain to its
// end with Nomad's lines; the node ends ineligible with its drain complete
// and its events recording it; node eligibility -enable brings it back.
func TestNodeDrainMigratesUnderMigrateBlock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three agent processes and real tasks")
	}
	dir := t.TempDir()
	http, raft := loopback.Addr(t), loopback.Addr(t)
	s := startAgentProc(t, "s1", http, "-server", "-bootstrap-expect", "1", "-data-dir", filepath.Join(dir, "s1"),
		"-http-addr", http, "-raft-addr", raft, "-node", "s1", "-log-level", "debug")
	eventually(t, 30*time.Second, "a leader", func() error {
		if l, err := s.client().Status().Leader(ctx(t)); err != nil || l == "" {
			return fmt.Errorf("leader %q, %v", l, err)
		}
		return nil
	})
	for _, name := range []string{"c1", "c2"} {
		addr, data := loopback.Addr(t), filepath.Join(dir, name)
		endTasksUnder(t, data)
		startAgentProc(t, name, addr, "-client", "-data-dir", data, "-servers", http, "-http-addr", addr,
			"-node", name, "-log-level", "debug")
	}
	s.waitNodeReady(2)
	c := s.client()

	const count = 4
	spec := rolloutSpec{ID: "drained", Count: count, Version: "1",
		Script: `exec python3 -m http.server "$NOMAD_PORT_http" --bind 127.0.0.1`,
		Update: "      max_parallel = 2\n" + fastUpdate,
		Group: `    network {
      port "http" {}
    }
    service {
      name     = "web"
      port     = "http"
      provider = "nomad"
      check {
        type     = "http"
        path     = "/"
        interval = "300ms"
        timeout  = "1s"
      }
    }
    migrate {
      max_parallel     = 1
      health_check     = "checks"
      min_healthy_time = "1s"
      healthy_deadline = "30s"
    }`}
	stopJobProcs(t, c, spec.ID)
	spec.run(t, c)
	waitRollout(t, c, spec.ID, 0, structs.DeploymentStatusSuccessful, 90*time.Second)

	// Drain the node with most of the group.
	perNode := map[string]int{}
	for _, a := range allocsOf(t, c, spec.ID) {
		if a.DesiredStatus == structs.AllocDesiredStatusRun {
			perNode[a.NodeID]++
		}
	}
	var target string
	for id, n := range perNode {
		if target == "" || n > perNode[target] || n == perNode[target] && id < target {
			target = id
		}
	}
	moved := perNode[target]
	if moved < 2 {
		t.Fatalf("placement %v: no node holds two allocs to move", perNode)
	}

	sample := sampleDrain(t, c, spec.ID, target, count)
	start := time.Now()
	out, err := s.cli(t, "node", "drain", "-enable", "-yes", "-deadline", "5m", "-m", "e2e", target)
	took := time.Since(start)
	sample.stop()
	if err != nil {
		t.Fatalf("node drain: %v\n%s", err, out)
	}
	for _, want := range []string{
		fmt.Sprintf("Node %q drain strategy set", target),
		"marked for migration",
		fmt.Sprintf("All allocations on node %q have stopped", target),
		"Drain complete for node " + target,
		"Job      Group  On Node  Migrating  Moved",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("node drain output lacks %q", want)
		}
	}
	t.Logf("drain of %d allocs: %s; %d samples, worst unavailable %d, most on the move at once %d",
		moved, took.Round(time.Millisecond), sample.samples, sample.worstDown, sample.maxMoving)
	if sample.samples < 10 {
		t.Fatalf("only %d samples", sample.samples)
	}
	if sample.worstDown > 1 {
		t.Errorf("the group served %d of %d at worst: more than migrate.max_parallel (1) unavailable", count-sample.worstDown, count)
	}
	if sample.maxMoving > 1 {
		t.Errorf("%d allocs on the move at once, migrate.max_parallel 1", sample.maxMoving)
	}

	// Everything now runs, healthy, on the other node; the drained
	// node's allocs stopped as migrated.
	eventually(t, 30*time.Second, "the group running elsewhere", func() error {
		allocs := allocsOf(t, c, spec.ID)
		ok := 0
		for _, a := range allocs {
			if a.DesiredStatus != structs.AllocDesiredStatusRun {
				if a.NodeID == target && a.DesiredDescription != structs.AllocMigrating {
					return fmt.Errorf("%s stopped with %q", a.Name, a.DesiredDescription)
				}
				continue
			}
			if a.NodeID == target {
				return fmt.Errorf("%s still on the drained node", a.Name)
			}
			if running(a) && healthy(a) {
				ok++
			}
		}
		if ok != count {
			return fmt.Errorf("%d of %d running and healthy elsewhere: %s", ok, count, jsonString(allocs))
		}
		return nil
	})
	n, _, err := c.Nodes().Info(ctx(t), target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.DrainStrategy != nil || n.SchedulingEligibility != structs.NodeSchedulingIneligible {
		t.Fatalf("drained node: strategy %+v, eligibility %s", n.DrainStrategy, n.SchedulingEligibility)
	}
	if n.LastDrain == nil || n.LastDrain.Status != structs.DrainStatusComplete || n.LastDrain.Meta["message"] != "e2e" {
		t.Fatalf("LastDrain %+v", n.LastDrain)
	}
	status, err := s.cli(t, "node", "status", target)
	if err != nil || !strings.Contains(status, "Node drain complete") || !strings.Contains(status, "Node drain strategy set") ||
		!strings.Contains(status, "= ineligible") {
		t.Fatalf("node status: %v\n%s", err, status)
	}
	if out, err := s.cli(t, "node", "eligibility", "-enable", target); err != nil ||
		!strings.Contains(out, "eligible for scheduling") {
		t.Fatalf("node eligibility: %v\n%s", err, out)
	}
	if n, _, _ := c.Nodes().Info(ctx(t), target, nil); n.SchedulingEligibility != structs.NodeSchedulingEligible {
		t.Fatalf("eligibility after -enable: %s", n.SchedulingEligibility)
	}
}

// TestNodeDrainBadInput: the CLI and the API refuse bad drains with exit 1
// and 4xx answers, and change nothing.
func TestNodeDrainBadInput(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	nodes, _, err := c.Nodes().List(ctx(t), nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes %v, %v", nodes, err)
	}
	id := nodes[0].ID
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"node", "drain", "-enable", "-yes", "no-such-node"}, `No node(s) with prefix or id "no-such-node" found`},
		{[]string{"node", "drain", "-enable", "-disable", id}, "Either the '-enable' or '-disable' flag must be set"},
		{[]string{"node", "drain", "-enable"}, "This command takes one argument: <node-id>"},
		{[]string{"node", "drain", "-enable", "-yes", "-deadline=-10m", id}, "-deadline must be positive"},
		{[]string{"node", "eligibility", id}, "Either the '-enable' or '-disable' flag must be set"},
	} {
		out, err := p.cli(t, tc.args...)
		if err == nil || !strings.Contains(out, tc.msg) {
			t.Errorf("drover %v: %v\n%s", tc.args, err, out)
		}
	}
	var se *apiclient.StatusError
	if _, err := c.Put(ctx(t), "/v1/node/no-such-node/drain", map[string]any{"DrainSpec": map[string]any{"Deadline": 0}}, nil); !apiclient.IsNotFound(err) {
		t.Errorf("API drain of an unknown node: %v", err)
	}
	if _, err := c.Put(ctx(t), "/v1/node/"+id+"/drain", map[string]any{"DrainSpec": map[string]any{"Deadline": -2}}, nil); !errors.As(err, &se) || se.Code != 400 {
		t.Errorf("API negative deadline: %v", err)
	}
	n, _, err := c.Nodes().Info(ctx(t), id, nil)
	if err != nil || n.DrainStrategy != nil || n.SchedulingEligibility != structs.NodeSchedulingEligible || n.LastDrain != nil {
		t.Fatalf("bad input changed the node: %+v, %v", n, err)
	}
}
