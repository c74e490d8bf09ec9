package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/droverhq/drover/drivers/docker"
	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// dockerBridgeJob is a bridge group of a docker task, a raw_exec task
// and an exec task, as Nomad runs them: all in the allocation's one
// namespace, held by docker's pause container and configured through
// CNI. The docker task serves on its "to" port (8080) the namespace it
// is in and the addresses it sees; the others log the same of their own.
func dockerBridgeJob(id, image string) string {
	web := `readlink /proc/self/ns/net > /local/ns; cat /proc/net/fib_trie > /local/fib; echo hello-docker-bridge > /local/index.html; ` +
		`exec httpd -f -p 8080 -h /local`
	side := `echo "ns $(readlink /proc/self/ns/net)"; ip -4 -o addr show dev eth0; echo started; exec sleep 600`
	return fmt.Sprintf(`job %[1]q {
  datacenters = ["dc1"]
  group "g" {
    network {
      mode = "bridge"
      port "http" {
        to = 8080
      }
    }
    service {
      name         = "%[1]s-alloc"
      port         = "http"
      provider     = "nomad"
      address_mode = "alloc"
      check {
        name     = "index"
        type     = "http"
        path     = "/index.html"
        interval = "1s"
        timeout  = "1s"
      }
    }
    task "web" {
      driver = "docker"
      config {
        image   = %[2]q
        command = "/bin/sh"
        args    = ["-c", %[3]q]
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %[4]q]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
    task "iso" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %[4]q]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, image, web, side)
}

// pauseContainer inspects the allocation's pause container; nil when it
// does not exist.
func pauseContainer(t testing.TB, cli *client.Client, allocID string) *container.InspectResponse {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ct, err := cli.ContainerInspect(c, docker.PauseName(allocID))
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return &ct
}

// TestDockerBridgeSharesTheAllocationNamespace: a bridge group with a
// docker task, a raw_exec task and an exec task runs them all in the
// namespace of the allocation's pause container, configured through CNI:
// the docker task answers on the host's mapped port, all see the one
// eth0 address (the allocation's, which address_mode = "alloc"
// advertises and its check reaches); once the job stops, the pause
// container, the namespace's iptables rules and its address lease are
// gone.
func TestDockerBridgeSharesTheAllocationNamespace(t *testing.T) {
	requireBridge(t)
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	ids := cleanupBridge(t)
	p := startDevAgent(t)
	c := p.client()
	node := devNodeID(t, c)
	t.Cleanup(func() { removeNodeContainers(cli, node) })

	began := time.Now()
	alloc := runJobFile(t, p, dockerBridgeJob("docker-bridge", image), "running")
	t.Logf("placement to running (a bridge group with a docker, a raw_exec and an exec task; the pause image present or built): %s", time.Since(began).Round(time.Millisecond))
	*ids = append(*ids, alloc.ID)
	stopJobProcs(t, c, "docker-bridge")

	pause := pauseContainer(t, cli, alloc.ID)
	if pause == nil || pause.HostConfig.NetworkMode != "none" || pause.Config.Labels[docker.LabelAllocID] != alloc.ID {
		t.Fatalf("pause container %+v", pause)
	}
	hp := hostPort(t, c, alloc.ID, "http")
	if got := httpGet(t, "http://"+hp+"/index.html"); got != "hello-docker-bridge\n" {
		t.Fatalf("index on the host port: %q", got)
	}
	a, _, err := c.Allocations().Info(ctx(t), alloc.ID, nil)
	if err != nil || a.NetworkStatus == nil || a.NetworkStatus.InterfaceName != "eth0" || !strings.HasPrefix(a.NetworkStatus.Address, "172.26.") {
		t.Fatalf("the allocation's network: %v %s", err, jsonString(a))
	}
	ip := a.NetworkStatus.Address

	// One namespace: the pause container's, for both tasks.
	var st syscall.Stat_t
	if err := syscall.Stat(pause.NetworkSettings.SandboxKey, &st); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("net:[%d]", st.Ino)
	if got := strings.TrimSpace(httpGet(t, "http://"+hp+"/ns")); got != want {
		t.Fatalf("the docker task's namespace %s, the pause container's %s", got, want)
	}
	for _, task := range []string{"app", "iso"} {
		var log string
		eventually(t, 30*time.Second, task+" started", func() error {
			if log = taskLog(t, c, alloc.ID, task); !strings.Contains(log, "started") {
				return fmt.Errorf("log %q", log)
			}
			return nil
		})
		if !strings.Contains(log, "ns "+want+"\n") || !strings.Contains(log, "eth0") || !strings.Contains(log, " inet "+ip+"/") {
			t.Fatalf("the %s task's log (namespace %s, address %s): %q", task, want, ip, log)
		}
	}
	// The docker task sees the same eth0 address (its local routes).
	if fib := httpGet(t, "http://"+hp+"/fib"); !strings.Contains(fib, "|-- "+ip+"\n") {
		t.Fatalf("the docker task's addresses lack %s:\n%s", ip, fib)
	}
	// The task answers on the allocation's own address too, which the
	// service advertises and its check reaches.
	if got := httpGet(t, "http://"+net.JoinHostPort(ip, "8080")+"/index.html"); got != "hello-docker-bridge\n" {
		t.Fatalf("on the allocation's address: %q", got)
	}
	eventually(t, 30*time.Second, "the alloc service registered and its check passing", func() error {
		var regs []*structs.ServiceRegistration
		if _, err := c.Get(ctx(t), "/v1/service/docker-bridge-alloc", nil, &regs); err != nil {
			return err
		}
		if len(regs) != 1 || net.JoinHostPort(regs[0].Address, strconv.Itoa(regs[0].Port)) != net.JoinHostPort(ip, "8080") {
			return fmt.Errorf("registrations %s", jsonString(regs))
		}
		var checks map[string]*structs.AllocCheckStatus
		if _, err := c.Get(ctx(t), "/v1/client/allocation/"+alloc.ID+"/checks", nil, &checks); err != nil {
			return err
		}
		for _, ch := range checks {
			if ch.Check == "index" && ch.Status == structs.CheckStatusSuccess {
				return nil
			}
		}
		return fmt.Errorf("checks %s", jsonString(checks))
	})

	if _, err := c.Jobs().Deregister(ctx(t), "docker-bridge", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the pause container, rules and lease removed", func() error {
		if pauseContainer(t, cli, alloc.ID) != nil {
			return fmt.Errorf("pause container %s still there", docker.PauseName(alloc.ID))
		}
		if _, err := os.Lstat(pause.NetworkSettings.SandboxKey); err == nil {
			return fmt.Errorf("namespace %s still there", pause.NetworkSettings.SandboxKey)
		}
		if left := netLeftovers(t, alloc.ID, ip); len(left) > 0 {
			return fmt.Errorf("left: %q", left)
		}
		return nil
	})
}

// TestDockerBridgePauseSurvivesClientSIGKILL: a client killed with
// SIGKILL and started again re-attaches to the allocation's pause
// container (the same one: its namespace is the running tasks') and the
// docker task keeps answering on its mapped port; a pause container of
// an allocation that no longer exists, left by a crash, is removed when
// the client starts.
func TestDockerBridgePauseSurvivesClientSIGKILL(t *testing.T) {
	requireBridge(t)
	if testing.Short() {
		t.Skip("runs a server and a client agent, the client twice")
	}
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	ids := cleanupBridge(t)
	srvHTTP, srvRaft := loopback.Addr(t), loopback.Addr(t)
	srv := startAgentProc(t, "s1", srvHTTP, "-server", "-bootstrap-expect", "1", "-data-dir", filepath.Join(t.TempDir(), "s1"),
		"-http-addr", srvHTTP, "-raft-addr", srvRaft, "-node", "s1")
	c := srv.client()
	eventually(t, 30*time.Second, "a leader", func() error {
		_, _, err := c.Jobs().List(ctx(t), nil)
		return err
	})
	dataDir := filepath.Join(t.TempDir(), "c1")
	cfg := filepath.Join(t.TempDir(), "client.hcl")
	if err := os.WriteFile(cfg, []byte("plugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startClient := func(name string) *agentProc {
		addr := loopback.Addr(t)
		return startAgentProc(t, name, addr, "-client", "-data-dir", dataDir, "-servers", srvHTTP,
			"-http-addr", addr, "-node", "c1", "-log-level", "debug", "-config", cfg)
	}
	cl := startClient("c1")
	srv.waitNodeReady(1)
	nodes, _, err := c.Nodes().List(ctx(t), nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes %v %v", nodes, err)
	}
	node := nodes[0].ID
	t.Cleanup(func() { removeNodeContainers(cli, node) })

	path := filepath.Join(t.TempDir(), "job.hcl")
	if err := os.WriteFile(path, []byte(dockerBridgeJob("docker-bridge-kill", image)), 0o644); err != nil {
		t.Fatal(err)
	}
	registerJob(t, c, parseJob(t, path))
	stopJobProcs(t, c, "docker-bridge-kill")
	var allocID string
	eventually(t, 60*time.Second, "the job running", func() error {
		allocs, err := jobAllocs(t, c, "docker-bridge-kill")
		if err != nil {
			return err
		}
		run := runningAllocs(allocs, 0)
		if len(run) != 1 {
			return fmt.Errorf("allocs %s", jsonString(allocs))
		}
		allocID = run[0]
		return nil
	})
	*ids = append(*ids, allocID)
	t.Cleanup(func() { killAllocProcs(allocID) })
	hp := hostPort(t, c, allocID, "http")
	httpGet(t, "http://"+hp+"/index.html")
	before := pauseContainer(t, cli, allocID)
	if before == nil {
		t.Fatal("no pause container")
	}

	_ = cl.cmd.Process.Signal(syscall.SIGKILL)
	<-cl.done
	// A crash left the pause container of an allocation that is gone.
	ctxc, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stale := structs.GenerateUUID()
	created, err := cli.ContainerCreate(ctxc, &container.Config{Image: image, Cmd: []string{"sleep", "600"},
		Labels: map[string]string{docker.LabelNodeID: node, docker.LabelAllocID: stale}},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, docker.PauseName(stale))
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.ContainerStart(ctxc, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}

	again := startClient("c1-again")
	eventually(t, 30*time.Second, "the restarted client registered", func() error {
		logs := again.logs.String()
		if !strings.Contains(logs, "re-attaching to alloc") || !strings.Contains(logs, "node registered") {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	after := pauseContainer(t, cli, allocID)
	if after == nil || after.ID != before.ID || after.State.StartedAt != before.State.StartedAt ||
		after.NetworkSettings.SandboxKey != before.NetworkSettings.SandboxKey {
		t.Fatalf("the pause container after the restart: %+v, was %s", after, before.ID)
	}
	if got := httpGet(t, "http://"+hp+"/index.html"); got != "hello-docker-bridge\n" {
		t.Fatalf("after the restart: %q", got)
	}
	if pauseContainer(t, cli, stale) != nil {
		t.Fatalf("the stale pause container %s is still there", docker.PauseName(stale))
	}
	a, _, err := c.Allocations().Info(ctx(t), allocID, nil)
	if err != nil || a.ClientStatus != structs.AllocClientStatusRunning {
		t.Fatalf("alloc after the restart: %v %s", err, jsonString(a))
	}
	ip := a.NetworkStatus.Address
	if _, err := c.Jobs().Deregister(ctx(t), "docker-bridge-kill", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "everything of the allocation's network removed", func() error {
		if pauseContainer(t, cli, allocID) != nil {
			return fmt.Errorf("pause container still there")
		}
		if left := netLeftovers(t, allocID, ip); len(left) > 0 {
			return fmt.Errorf("left: %q", left)
		}
		return nil
	})
}

// BenchmarkDockerBridgePlacementToRunning measures, on one dev agent,
// the time from a one-task docker job's registration until its
// allocation runs, on Docker's bridge (host mode, the port published by
// Docker) and in a bridge group (the pause container started, its
// namespace wired by the CNI plugins, the task's container joining it).
// One untimed bridge job first builds the pause image. Each job is
// purged, untimed, before the next.
//
//	go test ./e2e -run '^$' -bench DockerBridgePlacementToRunning -benchtime 5x
func BenchmarkDockerBridgePlacementToRunning(b *testing.B) {
	requireBridge(b)
	cli := dockertest.Client(b)
	image := dockertest.BusyboxImage(b, cli)
	ids := cleanupBridge(b)
	p := startDevAgent(b, "-log-level", "warn")
	c := p.client()
	node := ""
	if nodes, _, err := c.Nodes().List(ctx(b), nil); err == nil && len(nodes) == 1 {
		node = nodes[0].ID
	}
	b.Cleanup(func() { removeNodeContainers(cli, node) })
	i := 0
	run := func(b *testing.B, mode string) time.Duration {
		id := fmt.Sprintf("docker-bridge-bench-%s-%d", mode, i)
		i++
		job := apiJobMap(id, structs.JobTypeService, 1, "docker", map[string]any{"image": image, "command": "sleep", "args": []string{"600"}}, 20, 32)
		tg := job["TaskGroups"].([]any)[0].(map[string]any)
		tg["Networks"] = []any{map[string]any{"Mode": mode, "DynamicPorts": []any{map[string]any{"Label": "http", "To": 8080}}}}
		start := time.Now()
		if _, err := c.Jobs().Register(ctx(b), job); err != nil {
			b.Fatal(err)
		}
		waitRunning(b, c, id, 1)
		elapsed := time.Since(start)
		b.StopTimer()
		if allocs, err := jobAllocs(b, c, id); err == nil {
			for _, a := range allocs {
				*ids = append(*ids, a.ID)
			}
		}
		stopJob(b, c, id)
		b.StartTimer()
		return elapsed
	}
	b.Logf("warm-up (the pause image built if missing): bridge running in %s", run(b, "bridge"))
	for _, mode := range []string{"host", "bridge"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				b.Logf("%s running in %s", mode, run(b, mode))
			}
		})
	}
}
