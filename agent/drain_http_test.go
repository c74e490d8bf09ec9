package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// The drain and eligibility endpoints through a real server, in Nomad's
// shapes: Nomad's Go client drains a node and reads back its
// DrainStrategy, LastDrain and events; bad input is a 400 or a 404 and
// changes nothing.
func TestNodeDrainEndpoints(t *testing.T) {
	a := startAgent(t, "s1", 1)
	ctx := context.Background()
	waitFor(t, "leadership", func() error {
		if !a.leader.Leading() {
			return errors.New("not leading")
		}
		return nil
	})
	node := &structs.Node{ID: "3f1e8c2a-0000-4000-8000-000000000001", Name: "c1", Datacenter: "dc1", NodePool: "default",
		Status: structs.NodeStatusReady, Attributes: map[string]string{"kernel.name": "linux"},
		NodeResources: &structs.NodeResources{Cpu: structs.NodeCpuResources{CpuShares: 1000},
			Memory: structs.NodeMemoryResources{MemoryMB: 1024}, Disk: structs.NodeDiskResources{DiskMB: 10000}},
		Drivers: map[string]*structs.DriverInfo{structs.DriverMock: {Detected: true, Healthy: true}}}
	if _, _, err := a.leader.RegisterNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := apiclient.New(a.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}

	// Bad input first: nothing changes.
	_, err = nc.Nodes().UpdateDrain("no-such-node", &nomad.DrainSpec{Deadline: time.Hour}, false, nil)
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "node not found") {
		t.Fatalf("drain of an unknown node: %v", err)
	}
	var se *apiclient.StatusError
	_, err = c.Put(ctx, "/v1/node/"+node.ID+"/drain", map[string]any{"DrainSpec": map[string]any{"Deadline": -5}}, nil)
	if !errors.As(err, &se) || se.Code != 400 || !strings.Contains(se.Msg, "DrainSpec.Deadline") {
		t.Fatalf("negative deadline: %v", err)
	}
	_, err = c.Put(ctx, "/v1/node/"+node.ID+"/eligibility", map[string]any{"Eligibility": "maybe"}, nil)
	if !errors.As(err, &se) || se.Code != 400 {
		t.Fatalf("unknown eligibility: %v", err)
	}
	_, err = c.Put(ctx, "/v1/node/"+node.ID+"/drain", map[string]any{"NodeID": "other"}, nil)
	if !errors.As(err, &se) || se.Code != 400 {
		t.Fatalf("a body naming another node: %v", err)
	}
	n, _, err := nc.Nodes().Info(node.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.DrainStrategy != nil || n.SchedulingEligibility != "eligible" || n.LastDrain != nil {
		t.Fatalf("refused requests changed the node: %+v", n)
	}

	// An alloc on the node, with nowhere else to go: the drain stays.
	if _, err := c.Jobs().Register(ctx, map[string]any{
		"ID": "web", "Name": "web", "Type": "service", "Datacenters": []string{"dc1"},
		"TaskGroups": []any{map[string]any{"Name": "g", "Count": 1, "Tasks": []any{map[string]any{
			"Name": "t", "Driver": "mock", "Config": map[string]any{"run_for": "1h"},
			"Resources": map[string]any{"CPU": 100, "MemoryMB": 64}}}}},
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the alloc placed", func() error {
		allocs, _, err := nc.Nodes().Allocations(node.ID, nil)
		if err != nil || len(allocs) != 1 {
			return fmt.Errorf("%d allocs, %v", len(allocs), err)
		}
		return nil
	})

	// A drain, in Nomad's shapes.
	resp, err := nc.Nodes().UpdateDrainOpts(node.ID, &nomad.DrainOptions{
		DrainSpec: &nomad.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true}, Meta: map[string]string{"message": "patching"},
	}, nil)
	if err != nil || resp.NodeModifyIndex == 0 || resp.LastIndex != resp.NodeModifyIndex {
		t.Fatalf("drain: %+v, %v", resp, err)
	}
	n, _, err = nc.Nodes().Info(node.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := n.DrainStrategy
	if d == nil || d.Deadline != time.Hour || !d.IgnoreSystemJobs || d.StartedAt.IsZero() || d.ForceDeadline.Sub(d.StartedAt) != time.Hour {
		t.Fatalf("DrainStrategy %+v", d)
	}
	if !n.Drain || n.SchedulingEligibility != "ineligible" {
		t.Fatalf("draining node: drain %t, eligibility %s", n.Drain, n.SchedulingEligibility)
	}
	if n.LastDrain == nil || n.LastDrain.Status != nomad.DrainStatusDraining || n.LastDrain.Meta["message"] != "patching" {
		t.Fatalf("LastDrain %+v", n.LastDrain)
	}
	if len(n.Events) < 2 || n.Events[len(n.Events)-1].Message != "Node drain strategy set" || n.Events[len(n.Events)-1].Subsystem != "Drain" {
		t.Fatalf("events %+v", n.Events)
	}
	stubs, _, err := nc.Nodes().List(nil)
	if err != nil || len(stubs) != 1 || !stubs[0].Drain || stubs[0].LastDrain == nil {
		t.Fatalf("node list %+v, %v", stubs, err)
	}

	// A draining node may not be made eligible.
	_, err = nc.Nodes().ToggleEligibility(node.ID, true, nil)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "while it is draining") {
		t.Fatalf("eligible while draining: %v", err)
	}

	// The drainer marks the alloc to migrate; its replacement has nowhere
	// to go, so the drain goes on until the operator ends it.
	waitFor(t, "the alloc marked", func() error {
		allocs, _, err := nc.Nodes().Allocations(node.ID, nil)
		if err != nil || len(allocs) == 0 || !allocs[0].DesiredTransition.ShouldMigrate() {
			return fmt.Errorf("allocs %d, %v", len(allocs), err)
		}
		return nil
	})
	if _, err := nc.Nodes().UpdateDrainOpts(node.ID, &nomad.DrainOptions{MarkEligible: true}, nil); err != nil {
		t.Fatal(err)
	}
	n, _, _ = nc.Nodes().Info(node.ID, nil)
	if n.DrainStrategy != nil || n.SchedulingEligibility != "eligible" || n.LastDrain.Status != nomad.DrainStatusCanceled {
		t.Fatalf("after the drain was disabled: %+v", n)
	}
	var msgs []string
	for _, e := range n.Events {
		msgs = append(msgs, e.Message)
	}
	if got := strings.Join(msgs[len(msgs)-2:], ", "); got != "Node drain disabled, Node marked as eligible for scheduling" {
		t.Fatalf("events %v", msgs)
	}
	if _, err := nc.Nodes().ToggleEligibility(node.ID, false, nil); err != nil {
		t.Fatal(err)
	}
	n, _, _ = nc.Nodes().Info(node.ID, nil)
	if n.SchedulingEligibility != "ineligible" || n.Events[len(n.Events)-1].Message != "Node marked as ineligible for scheduling" {
		t.Fatalf("after eligibility: %s, events %+v", n.SchedulingEligibility, n.Events)
	}
}
