package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// TestServersAnswerAClientsAllocStatsAndLogs runs three servers and a
// separate client agent, and reads, through each server's address (as
// the nomad CLI does when pointed at a server), the running allocation's
// resource usage, the client host's stats and the task's log: the servers
// forward them to the client node. Once the client is gone, a server
// answers 502 instead of hanging.
func TestServersAnswerAClientsAllocStatsAndLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four agent processes")
	}
	servers := startCluster(t)
	var addrs []string
	for _, s := range servers {
		addrs = append(addrs, s.httpAddr)
	}
	clientHTTP := loopback.Addr(t)
	cl := startAgentProc(t, "c1", clientHTTP, "-client", "-data-dir", filepath.Join(t.TempDir(), "c1"),
		"-servers", strings.Join(addrs, ","), "-http-addr", clientHTTP, "-node", "c1", "-log-level", "debug")
	eventually(t, 30*time.Second, "the client node ready", func() error {
		nodes, _, err := servers[0].client().Nodes().List(ctx(t), nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Status != structs.NodeStatusReady {
			return fmt.Errorf("nodes %s", jsonString(nodes))
		}
		return nil
	})

	job := parseJob(t, "testdata/echo.hcl")
	job.ID, job.Name = "stats-echo", "stats-echo"
	registerJob(t, servers[1].client(), job)
	var allocID, nodeID string
	eventually(t, 60*time.Second, "the job running on the client", func() error {
		allocs, err := jobAllocs(t, servers[0].client(), job.ID)
		if err != nil {
			return err
		}
		run := runningAllocs(allocs, 0)
		if len(run) != 1 {
			return fmt.Errorf("%d running: %s", len(run), jsonString(allocs))
		}
		allocID, nodeID = run[0], allocs[0].NodeID
		return allHaveProcesses(run)
	})
	t.Cleanup(func() { killAllocProcs(allocID) })

	// A process's resident memory may read 0 for a moment after it starts
	// (the kernel folds its per-CPU counters in lazily).
	eventually(t, 20*time.Second, "the task's resident memory measured", func() error {
		nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + servers[0].httpAddr})
		if err != nil {
			return err
		}
		usage, err := nc.Allocations().Stats(&nomad.Allocation{ID: allocID}, nil)
		if err != nil {
			return err
		}
		if task := usage.Tasks["echo"]; task == nil || task.ResourceUsage.MemoryStats.RSS == 0 {
			return fmt.Errorf("usage %s", jsonString(usage))
		}
		return nil
	})
	for _, s := range servers {
		nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + s.httpAddr})
		if err != nil {
			t.Fatal(err)
		}
		usage, err := nc.Allocations().Stats(&nomad.Allocation{ID: allocID}, nil)
		if err != nil {
			t.Fatalf("alloc stats through %s: %v", s.name, err)
		}
		task := usage.Tasks["echo"]
		if task == nil || task.ResourceUsage.MemoryStats.RSS == 0 ||
			!slices.Contains(task.ResourceUsage.MemoryStats.Measured, "RSS") ||
			!slices.Contains(task.ResourceUsage.CpuStats.Measured, "Percent") || len(task.Pids) == 0 ||
			usage.ResourceUsage.MemoryStats.RSS != task.ResourceUsage.MemoryStats.RSS {
			t.Fatalf("alloc stats through %s: %s", s.name, jsonString(usage))
		}
		host, err := nc.Nodes().Stats(nodeID, nil)
		if err != nil {
			t.Fatalf("host stats through %s: %v", s.name, err)
		}
		if host.Memory == nil || host.Memory.Total == 0 || len(host.CPU) == 0 || host.AllocDirStats == nil ||
			host.AllocDirStats.Size == 0 || host.Uptime == 0 {
			t.Fatalf("host stats through %s: %s", s.name, jsonString(host))
		}
		// The logs, read from the server's address (drover's client asks
		// exactly the address it is given).
		ac, err := apiclient.New(s.httpAddr)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := ac.AllocLogs(bounded(t, 10*time.Second), allocID, apiclient.LogsOptions{Task: "echo"})
		if err != nil {
			t.Fatalf("logs through %s: %v", s.name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != "hello from drover\n" {
			t.Fatalf("logs through %s: %q %v", s.name, b, err)
		}
		if _, err := nc.Allocations().Stats(&nomad.Allocation{ID: "00000000-0000-0000-0000-000000000000"}, nil); err == nil ||
			!strings.Contains(err.Error(), "404") {
			t.Fatalf("stats of an unknown allocation through %s: %v", s.name, err)
		}
	}

	// The client dies: the servers say so, quickly, rather than hang.
	_ = cl.cmd.Process.Signal(syscall.SIGKILL)
	<-cl.done
	hc := &http.Client{Timeout: 60 * time.Second}
	resp, err := hc.Get("http://" + servers[2].httpAddr + "/v1/client/allocation/" + allocID + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "c1") {
		t.Fatalf("stats of a dead client's allocation: %d %q", resp.StatusCode, body)
	}
}
