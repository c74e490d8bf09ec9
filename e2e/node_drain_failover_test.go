package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// TestNodeDrainSurvivesLeaderKill: three real servers and two clients; a
// drain of the client holding most of a group's four allocations is under
// way (one alloc moved) when the leader is SIGKILLed. The new leader's
// drainer, rebuilt from the replicated state, carries the drain on from
// where it stood: never more than one alloc on the move, the group never
// below its count at any sample, every alloc moved once, the drain
// complete and the node ineligible.
func TestNodeDrainSurvivesLeaderKill(t *testing.T) {
	chaosCheck(t)
	dir := t.TempDir()
	c := startChaosServers(t, dir)
	c.waitLeader(c.servers)
	for _, name := range []string{"c1", "c2"} {
		addr, data := loopback.Addr(t), filepath.Join(dir, name)
		endTasksUnder(t, data)
		startAgentProc(t, name, addr, "-client", "-data-dir", data, "-servers", strings.Join(c.httpAddrs(), ","),
			"-http-addr", addr, "-node", name, "-log-level", "debug")
	}
	c.any().waitNodeReady(2)

	const count = 4
	// min_healthy_time 3s: each move takes a few seconds, so that the
	// kill lands in the middle of the drain.
	spec := rolloutSpec{ID: "drain-failover", Count: count, Version: "1",
		Update: "      max_parallel = 2\n" + fastUpdate,
		Group: `    migrate {
      max_parallel     = 1
      health_check     = "task_states"
      min_healthy_time = "3s"
      healthy_deadline = "30s"
    }`}
	stopJobProcs(t, c.api(), spec.ID)
	spec.run(t, c.api())
	waitRollout(t, c.api(), spec.ID, 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	perNode := map[string]int{}
	for _, a := range allocsOf(t, c.api(), spec.ID) {
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
	if perNode[target] < 2 {
		t.Fatalf("placement %v: no node holds two allocs to move", perNode)
	}

	api := func() *apiclient.Client {
		for _, s := range c.up() {
			return s.api()
		}
		return nil
	}
	sample := sampleDrainVia(t, api, spec.ID, target, count)
	if _, err := c.api().Nodes().UpdateDrain(ctx(t), target, apiclient.DrainOptions{
		Spec: &structs.DrainSpec{Deadline: 10 * time.Minute}}); err != nil {
		t.Fatal(err)
	}
	movedFromTarget := func(cl *apiclient.Client) (int, error) {
		allocs, err := jobAllocs(t, cl, spec.ID)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, a := range allocs {
			if a.NodeID == target && a.DesiredStatus == structs.AllocDesiredStatusStop && a.DesiredDescription == structs.AllocMigrating {
				n++
			}
		}
		return n, nil
	}
	eventually(t, 60*time.Second, "the first alloc moved", func() error {
		if n, err := movedFromTarget(c.api()); err != nil || n < 1 {
			return fmt.Errorf("%d moved, %v", n, err)
		}
		return nil
	})
	killed := c.killLeader()
	leader := c.waitLeader(c.up())
	t.Logf("leader %s killed mid-drain; %s leads", killed.name, leader.name)

	eventually(t, 90*time.Second, "the drain complete under the new leader", func() error {
		n, _, err := leader.api().Nodes().Info(ctx(t), target, nil)
		if err != nil {
			return err
		}
		if n.DrainStrategy != nil || n.LastDrain == nil || n.LastDrain.Status != structs.DrainStatusComplete {
			return fmt.Errorf("drain strategy %+v, last %+v", n.DrainStrategy, n.LastDrain)
		}
		if n.SchedulingEligibility != structs.NodeSchedulingIneligible {
			t.Fatalf("eligibility after the drain: %s", n.SchedulingEligibility)
		}
		return nil
	})
	eventually(t, 30*time.Second, "the group running, healthy, elsewhere", func() error {
		allocs := allocsOf(t, leader.api(), spec.ID)
		ok := 0
		for _, a := range allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusRun && a.NodeID != target && running(a) && healthy(a) {
				ok++
			}
		}
		if ok != count {
			return fmt.Errorf("%d of %d: %s", ok, count, jsonString(allocs))
		}
		return nil
	})
	sample.stop()
	moved, err := movedFromTarget(leader.api())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples, worst unavailable %d, most on the move at once %d, %d allocs moved",
		sample.samples, sample.worstDown, sample.maxMoving, moved)
	if moved != perNode[target] {
		t.Errorf("%d allocs moved off the node, want %d (each once)", moved, perNode[target])
	}
	if sample.worstDown > 1 {
		t.Errorf("the group served %d of %d at worst", count-sample.worstDown, count)
	}
	if sample.maxMoving > 1 {
		t.Errorf("%d allocs on the move at once, migrate.max_parallel 1", sample.maxMoving)
	}
}
