package client

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/docker"
	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/structs"
)

// These tests need a Docker daemon (see dockertest); they skip without
// one unless DROVER_REQUIRE_DOCKER=1.

// runDockerAgent starts an agent over HTTP with the docker driver; the
// returned function shuts it down and closes the driver, as a client
// process that exits would.
func runDockerAgent(t *testing.T, dataDir string, servers []string) (*Agent, func(stopTasks bool)) {
	t.Helper()
	d := docker.New(docker.Options{Logger: testLogger(t)})
	a, err := New(Config{
		DataDir: dataDir, NodeName: "box", Servers: servers, Logger: testLogger(t),
		Drivers:       []drivers.Driver{d},
		RetryInterval: 20 * time.Millisecond, AllocWait: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Run(context.Background()); close(done) }()
	return a, func(stopTasks bool) { a.Shutdown(stopTasks); <-done; d.Close() }
}

func dockerAlloc(id, node, image string) *structs.Allocation {
	al := serviceAlloc(id, node, "", 0)
	al.Job.TaskGroups[0].Tasks[0] = &structs.Task{Name: "srv", Driver: "docker", KillTimeout: time.Second,
		Config: map[string]any{"image": image, "command": "/bin/sh",
			"args": []any{"-c", `echo "$NOMAD_ALLOC_ID in $NOMAD_TASK_DIR"; exec sleep 300`}}}
	return al
}

// nodeContainers lists the containers labelled with a node's ID, by
// alloc ID.
func nodeContainers(t *testing.T, cli *client.Client, node string) map[string][]container.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", docker.LabelNodeID+"="+node))})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]container.Summary{}
	for _, c := range list {
		out[c.Labels[docker.LabelAllocID]] = append(out[c.Labels[docker.LabelAllocID]], c)
	}
	return out
}

// TestDockerRestartReattachesAndReapsOrphans: a client that restarts
// re-attaches to its running container (no second container, one
// Started event), and removes the container of an allocation it no
// longer has on disk.
func TestDockerRestartReattachesAndReapsOrphans(t *testing.T) {
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	srv := newFakeServer()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	data := t.TempDir()

	a1, stop1 := runDockerAgent(t, data, []string{hs.URL})
	waitFor(t, "registration", a1.Registered)
	node := a1.NodeID()
	t.Cleanup(func() {
		for _, cs := range nodeContainers(t, cli, node) {
			for _, c := range cs {
				_ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
			}
		}
	})
	srv.put(dockerAlloc("keep", node, image))
	srv.put(dockerAlloc("ghost", node, image))
	waitFor(t, "both containers running", func() bool {
		cs := nodeContainers(t, cli, node)
		return len(cs["keep"]) == 1 && len(cs["ghost"]) == 1 &&
			cs["keep"][0].State == "running" && cs["ghost"][0].State == "running" &&
			srv.alloc("keep").ClientStatus == structs.AllocClientStatusRunning
	})
	logPath := filepath.Join(data, "alloc", "keep", "alloc", "logs", "srv.stdout.0")
	waitFor(t, "the task's output in its log file", func() bool {
		b, _ := os.ReadFile(logPath)
		return string(b) == "keep in /local\n"
	})
	keepID := nodeContainers(t, cli, node)["keep"][0].ID
	stop1(false)
	if cs := nodeContainers(t, cli, node); cs["keep"][0].State != "running" {
		t.Fatal("a client restart stopped its container")
	}

	// The ghost's directory goes (as when a client dies while collecting
	// an allocation); its container is left, owned by nothing.
	if err := os.RemoveAll(filepath.Join(data, "alloc", "ghost")); err != nil {
		t.Fatal(err)
	}
	srv.remove("ghost")

	a2, stop2 := runDockerAgent(t, data, []string{hs.URL})
	defer stop2(true)
	if a2.NodeID() != node {
		t.Fatalf("node ID changed across the restart")
	}
	waitFor(t, "the ghost's container to be removed", func() bool {
		return len(nodeContainers(t, cli, node)["ghost"]) == 0
	})
	cs := nodeContainers(t, cli, node)
	if len(cs["keep"]) != 1 || cs["keep"][0].ID != keepID || cs["keep"][0].State != "running" {
		t.Fatalf("kept alloc's containers after the restart: %+v", cs["keep"])
	}
	a2.mu.Lock()
	e := a2.allocs["keep"]
	a2.mu.Unlock()
	if e == nil || e.runner == nil {
		t.Fatal("the kept alloc has no runner after the restart")
	}
	st := e.runner.Status().TaskStates["srv"]
	var types []string
	for _, ev := range st.Events {
		types = append(types, ev.Type)
	}
	started := len(slices.DeleteFunc(slices.Clone(types), func(s string) bool { return s != structs.TaskStarted }))
	if started != 1 || st.State != structs.TaskStateRunning || st.Restarts != 0 {
		t.Fatalf("after re-attaching: %s, events %s", st.State, strings.Join(types, ","))
	}

	// The servers stop the kept alloc: its container is stopped and
	// removed.
	srv.change("keep", func(al *structs.Allocation) { al.DesiredStatus = structs.AllocDesiredStatusStop })
	waitFor(t, "the kept container to go", func() bool {
		return len(nodeContainers(t, cli, node)["keep"]) == 0 &&
			srv.alloc("keep").ClientStatus == structs.AllocClientStatusComplete
	})
}
