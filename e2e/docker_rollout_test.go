package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/drivers/docker"
	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/structs"
)

// TestDockerRolloutWithCanaryAndChecks runs examples/docker.hcl on a dev
// agent with the test image: three containers behind an http check on
// their mapped host ports. Version 2 starts one canary; the test promotes
// it once its check has made it healthy; the others are then replaced one
// at a time, each gated by its check. At the end three containers serve
// version 2, the old ones are gone, and SIGINT removes the rest. It needs
// a Docker daemon (skipped without one unless DROVER_REQUIRE_DOCKER=1).
func TestDockerRolloutWithCanaryAndChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containers for tens of seconds")
	}
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	p := startDevAgent(t)
	c := p.client()
	node := devNodeID(t, c)
	t.Cleanup(func() { removeNodeContainers(cli, node) })

	v1 := parseJob(t, "../examples/docker.hcl", "image="+image, "version=1")
	count := v1.TaskGroups[0].Count
	registerJob(t, c, v1)
	var first []string
	eventually(t, 90*time.Second, "version 1 deployed, each container serving it on its host port", func() error {
		d, err := latestDeployment(t, c, v1.ID)
		if err != nil {
			return err
		}
		if d.JobVersion != 0 || d.Status != structs.DeploymentStatusSuccessful {
			return fmt.Errorf("deployment v%d %s: %s", d.JobVersion, d.Status, d.StatusDescription)
		}
		allocs, err := jobAllocs(t, c, v1.ID)
		if err != nil {
			return err
		}
		if first = runningAllocs(allocs, 0); len(first) != count {
			return fmt.Errorf("%d running", len(first))
		}
		return serving(t, c, first, "1")
	})
	if out, err := p.cli(t, "alloc", "logs", first[0], "server"); err != nil ||
		!strings.Contains(out, "serving version 1 on port 8080") {
		t.Fatalf("alloc logs: %v\n%s", err, out)
	}

	// Version 2, promoted by hand once its canary is healthy.
	v2 := parseJob(t, "../examples/docker.hcl", "image="+image, "version=2")
	v2.TaskGroups[0].Update.AutoPromote = false
	s := startSampler(t, c, v2.ID, 1)
	began := time.Now()
	registerJob(t, c, v2)
	var dep *structs.Deployment
	eventually(t, 60*time.Second, "the canary healthy through its check, the deployment waiting for promotion", func() error {
		d, err := latestDeployment(t, c, v2.ID)
		if err != nil {
			return err
		}
		st := d.TaskGroups["web"]
		if d.JobVersion != 1 || st == nil || st.HealthyAllocs < 1 ||
			d.StatusDescription != structs.DeploymentStatusDescriptionRunningNeedsPromotion {
			return fmt.Errorf("deployment %s", jsonString(d))
		}
		dep = d
		return nil
	})
	allocs, err := jobAllocs(t, c, v2.ID)
	if err != nil {
		t.Fatal(err)
	}
	canaries := runningAllocs(allocs, 1)
	if old := runningAllocs(allocs, 0); len(canaries) != 1 || len(old) != count {
		t.Fatalf("before promotion: %d canaries, %d old running; want 1 and %d", len(canaries), len(old), count)
	}
	if err := serving(t, c, canaries, "2"); err != nil {
		t.Fatalf("the canary: %v", err)
	}
	if _, err := c.Deployments().Promote(ctx(t), dep.ID, nil); err != nil {
		t.Fatalf("promote: %v", err)
	}
	eventually(t, 120*time.Second, "version 2 deployed", func() error {
		d, err := latestDeployment(t, c, v2.ID)
		if err != nil {
			return err
		}
		if d.ID != dep.ID || d.Status != structs.DeploymentStatusSuccessful {
			return fmt.Errorf("deployment %s %s: %s", d.ID, d.Status, d.StatusDescription)
		}
		return nil
	})
	took := time.Since(began)
	worst, samples := s.stop()
	t.Logf("version 1 to 2 (canary, promotion, %d replaced one at a time) in %s; %d samples, at most %d new allocs not yet healthy at once",
		count, took.Round(10*time.Millisecond), samples, worst)
	if maxParallel := v2.TaskGroups[0].Update.MaxParallel; worst > maxParallel {
		t.Errorf("%d new allocs unhealthy at once, max_parallel is %d", worst, maxParallel)
	}

	var second []string
	eventually(t, 30*time.Second, "only version 2 serving, the old containers gone", func() error {
		allocs, err := jobAllocs(t, c, v2.ID)
		if err != nil {
			return err
		}
		if second = runningAllocs(allocs, 1); len(second) != count {
			return fmt.Errorf("%d of version 2 running", len(second))
		}
		byAlloc := nodeContainers(cli, node)
		for _, id := range first {
			if n := len(byAlloc[id]); n > 0 {
				return fmt.Errorf("old alloc %s still has %d containers", id, n)
			}
		}
		if len(byAlloc) != count {
			return fmt.Errorf("containers of %d allocs, want %d", len(byAlloc), count)
		}
		return serving(t, c, second, "2")
	})

	if code := p.interrupt(); code != 0 {
		t.Fatalf("agent exited %d after SIGINT", code)
	}
	if left := nodeContainers(cli, node); len(left) != 0 {
		t.Errorf("containers survived the agent: %v", left)
	}
}

// devNodeID is the dev agent's node.
func devNodeID(t *testing.T, c *apiclient.Client) string {
	t.Helper()
	nodes, _, err := c.Nodes().List(ctx(t), nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes %v: %v", nodes, err)
	}
	n, _, err := c.Nodes().Info(ctx(t), nodes[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := n.Drivers[structs.DriverDocker]; d == nil || !d.Detected || !d.Healthy || n.Attributes["driver.docker"] != "1" {
		t.Fatalf("the dev node's docker driver: %+v, attributes %v", d, n.Attributes)
	}
	return n.ID
}

// serving checks that each alloc answers on its host port with its own
// page of the version.
func serving(t *testing.T, c *apiclient.Client, ids []string, version string) error {
	for _, id := range ids {
		a, _, err := c.Allocations().Info(ctx(t), id, nil)
		if err != nil {
			return err
		}
		port := 0
		if a.AllocatedResources != nil {
			for _, p := range a.AllocatedResources.Shared.Ports {
				if p.Label == "http" && p.To == 8080 {
					port = p.Value
				}
			}
		}
		if port == 0 {
			return fmt.Errorf("alloc %s has no http port mapped to 8080", id)
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "version " + version + " on " + id + "\n"; string(b) != want {
			return fmt.Errorf("alloc %s on port %d: %q, want %q", id, port, b, want)
		}
	}
	return nil
}

// nodeContainers lists the containers of a node by alloc ID.
func nodeContainers(cli *client.Client, node string) map[string][]string {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cli.ContainerList(c, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", docker.LabelNodeID+"="+node))})
	out := map[string][]string{}
	if err != nil {
		out["error: "+err.Error()] = nil
		return out
	}
	for _, ct := range list {
		id := ct.Labels[docker.LabelAllocID]
		out[id] = append(out[id], ct.ID)
	}
	return out
}

func removeNodeContainers(cli *client.Client, node string) {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ids := range nodeContainers(cli, node) {
		for _, id := range ids {
			_ = cli.ContainerRemove(c, id, container.RemoveOptions{Force: true})
		}
	}
}
