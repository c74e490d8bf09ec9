package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// TestNodePoolPlacesJobsOnItsNodes: a server and two client agents over
// loopback, one client in pool "gpu" (which its registration creates), one
// in default; a job of pool gpu is placed only on the gpu node, a job of a
// pool that does not exist is refused, and a pool in use is not deleted.
func TestNodePoolPlacesJobsOnItsNodes(t *testing.T) {
	s := startAgent(t, "s1", 1)
	client := func(name, pool string) *Agent {
		return startAgentWith(t, Config{
			Client: true, Servers: []string{s.HTTPAddr()}, DataDir: filepath.Join(t.TempDir(), name),
			HTTPAddr: loopback.Addr(t), NodeName: name, NodePool: pool,
			Logger: hclog.New(&hclog.LoggerOptions{Name: name, Output: tWriter{t}, Level: hclog.Debug}),
		})
	}
	gpu, plain := client("gpu1", "gpu"), client("plain1", "")
	api, err := apiclient.New(s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []*Agent{gpu, plain} {
		waitFor(t, "the client's node", func() error {
			n, _, err := api.Nodes().Info(ctx, c.Client().NodeID(), nil)
			if err != nil {
				return err
			}
			if n.Status != structs.NodeStatusReady {
				return fmt.Errorf("node %s", n.Status)
			}
			return nil
		})
	}
	var pool structs.NodePool
	if _, err := api.Get(ctx, "/v1/node/pool/gpu", nil, &pool); err != nil || pool.Name != "gpu" {
		t.Fatalf("pool gpu: %+v %v", pool, err)
	}
	var nodes []*structs.NodeListStub
	if _, err := api.Get(ctx, "/v1/node/pool/gpu/nodes", nil, &nodes); err != nil || len(nodes) != 1 || nodes[0].ID != gpu.Client().NodeID() {
		t.Fatalf("gpu's nodes: %v %v", nodes, err)
	}

	job := func(id, pool string) map[string]any {
		return map[string]any{
			"ID": id, "Name": id, "Type": "batch", "Datacenters": []string{"dc1"}, "NodePool": pool,
			"TaskGroups": []any{map[string]any{"Name": "g", "Count": 3, "Tasks": []any{map[string]any{
				"Name": "t", "Driver": "raw_exec", "Config": map[string]any{"command": "/bin/true"}}}}},
		}
	}
	if _, err := api.Jobs().Register(ctx, job("lost", "nowhere")); err == nil || !strings.Contains(err.Error(), `job "lost" is in nonexistent node pool "nowhere"`) {
		t.Fatalf("job of an unknown pool: %v", err)
	}
	if _, err := api.Jobs().Register(ctx, job("train", "gpu")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three allocations of train", func() error {
		var allocs []*structs.AllocationListStub
		if _, err := api.Get(ctx, "/v1/job/train/allocations", nil, &allocs); err != nil {
			return err
		}
		if len(allocs) < 3 {
			return fmt.Errorf("%d allocations", len(allocs))
		}
		for _, a := range allocs {
			if a.NodeID != gpu.Client().NodeID() {
				t.Fatalf("alloc %s on node %s, not the gpu node", a.ID, a.NodeID)
			}
		}
		return nil
	})
	if _, err := api.Delete(ctx, "/v1/node/pool/gpu", nil, nil); err == nil || !strings.Contains(err.Error(), `node pool "gpu" has nodes in regions`) {
		t.Fatalf("delete gpu: %v", err)
	}
}
