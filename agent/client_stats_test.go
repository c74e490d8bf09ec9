package agent

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// startClientAgent runs a client-only agent of the server s; its tasks
// are killed when the test ends.
func startClientAgent(t *testing.T, s *Agent, name string) *Agent {
	t.Helper()
	c := startAgentWith(t, Config{
		Client: true, Servers: []string{s.HTTPAddr()}, DataDir: filepath.Join(t.TempDir(), name),
		HTTPAddr: loopback.Addr(t), NodeName: name,
		Logger: hclog.New(&hclog.LoggerOptions{Name: name, Output: tWriter{t}, Level: hclog.Debug}),
	})
	t.Cleanup(func() { c.Client().Shutdown(true) })
	return c
}

// runRawExec registers a one-task raw_exec job and returns its running
// allocation's ID.
func runRawExec(t *testing.T, s *Agent, id, script string) string {
	t.Helper()
	waitFor(t, "registering "+id, func() error {
		_, err := api(t, s).Jobs().Register(bounded(t), map[string]any{
			"ID": id, "Name": id, "Type": "service", "Datacenters": []string{"dc1"},
			"TaskGroups": []any{map[string]any{"Name": "web", "Count": 1, "Tasks": []any{map[string]any{
				"Name": "app", "Driver": "raw_exec", "KillTimeout": 1e9,
				"Config": map[string]any{"command": "/bin/sh", "args": []string{"-c", script}}}}}},
		})
		return err
	})
	var allocID string
	waitFor(t, id+" running", func() error {
		allocs, _, err := api(t, s).Jobs().Allocations(bounded(t), id, nil)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			if a.ClientStatus == structs.AllocClientStatusRunning {
				allocID = a.ID
				return nil
			}
		}
		return fmt.Errorf("allocations %+v", allocs)
	})
	return allocID
}

// Through a server-only agent's address, the official Go client reads a
// client node's allocation stats, host stats and logs, which the server
// forwards to the node; what the nomad CLI prints is filled.
func TestStatsAndLogsOfAClientNodeThroughAServersAddress(t *testing.T) {
	s := startAgent(t, "s1", 1)
	waitLeader(t, s)
	c := startClientAgent(t, s, "c1")
	allocID := runRawExec(t, s, "stats", "echo hello-stats; exec sleep 600")
	nc := nomadAPI(t, s)

	var usage *nomad.AllocResourceUsage
	waitFor(t, "the task's measured usage", func() error {
		u, err := nc.Allocations().Stats(&nomad.Allocation{ID: allocID}, nil)
		if err != nil {
			return err
		}
		if app := u.Tasks["app"]; app == nil || app.ResourceUsage.MemoryStats.RSS == 0 {
			return fmt.Errorf("usage %+v", u.Tasks)
		}
		usage = u
		return nil
	})
	app := usage.Tasks["app"]
	ms, cs := app.ResourceUsage.MemoryStats, app.ResourceUsage.CpuStats
	switch {
	case !slices.Contains(ms.Measured, "RSS") || !slices.Contains(cs.Measured, "Percent"):
		t.Errorf("measured %v %v", ms.Measured, cs.Measured)
	case app.Timestamp <= 0 || usage.Timestamp != app.Timestamp || len(app.Pids) != 1:
		t.Errorf("task %+v", app)
	case usage.ResourceUsage == nil || usage.ResourceUsage.MemoryStats.RSS != ms.RSS || usage.ResourceUsage.CpuStats == nil:
		t.Errorf("allocation's usage %+v", usage.ResourceUsage)
	}
	if one, err := nc.Allocations().Stats(&nomad.Allocation{ID: allocID}, &nomad.QueryOptions{Params: map[string]string{"task": "nope"}}); err == nil ||
		!strings.Contains(err.Error(), "404") {
		t.Errorf("an unknown task: %+v %v", one, err)
	}
	if _, err := nc.Allocations().Stats(&nomad.Allocation{ID: "0c8a3c0e-0000-0000-0000-000000000000"}, nil); err == nil ||
		!strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "unknown allocation") {
		t.Errorf("an unknown allocation: %v", err)
	}

	host, err := nc.Nodes().Stats(c.Client().NodeID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if host.Memory == nil || host.Memory.Total == 0 || len(host.CPU) == 0 || host.AllocDirStats == nil ||
		host.AllocDirStats.Size == 0 || len(host.DiskStats) == 0 || host.Uptime == 0 {
		t.Errorf("host stats %+v", host)
	}
	if _, err := nc.Nodes().Stats("nope", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("an unknown node: %v", err)
	}

	// The logs, through the server's address.
	waitFor(t, "the task's stdout through the server", func() error {
		code, body := get(t, "http://"+s.HTTPAddr()+"/v1/client/fs/logs/"+allocID+"?task=app&type=stdout&plain=true")
		if code != http.StatusOK || body != "hello-stats\n" {
			return fmt.Errorf("%d %q", code, body)
		}
		return nil
	})

	// The client answers the same on its own address.
	if u, err := nomadAPI(t, c).Allocations().Stats(&nomad.Allocation{ID: allocID}, nil); err != nil ||
		u.Tasks["app"] == nil || u.Tasks["app"].ResourceUsage.MemoryStats.RSS == 0 {
		t.Errorf("on the client's address: %+v %v", u, err)
	}
	if h, err := nomadAPI(t, c).Nodes().Stats(c.Client().NodeID(), nil); err != nil || h.Memory.Total == 0 {
		t.Errorf("host stats on the client's address: %+v %v", h, err)
	}
}
