package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/client/network"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// requireBridge skips a bridge networking test where it cannot run (not
// root, no CNI plugins, no iptables, or no exec driver), unless
// DROVER_REQUIRE_ISOLATION=1 makes that a failure.
func requireBridge(t testing.TB) {
	t.Helper()
	requireIsolation(t)
	reason := ""
	if _, err := exec.LookPath("iptables-save"); err != nil {
		reason = "iptables is not installed"
	}
	for _, p := range network.Plugins {
		if _, err := invoke.FindInPath(p, network.SplitPath(network.DefaultCNIPath)); err != nil && reason == "" {
			reason = fmt.Sprintf("CNI plugin %s is not in %s (containernetworking-plugins)", p, network.DefaultCNIPath)
		}
	}
	if reason == "" {
		return
	}
	if os.Getenv("DROVER_REQUIRE_ISOLATION") == "1" {
		t.Fatalf("DROVER_REQUIRE_ISOLATION=1 but: %s", reason)
	}
	t.Skip(reason)
}

// cleanupBridge registers, before the test's agents (so that it runs
// after they are killed), the removal of what a failed test leaves of its
// allocations' networks; it returns where to note their IDs.
func cleanupBridge(t testing.TB) *[]string {
	ids := new([]string)
	t.Cleanup(func() {
		list, err := network.Conflist(network.BridgeConf{BridgeName: network.DefaultBridgeName, Subnet: network.DefaultSubnet})
		if err != nil {
			return
		}
		conf, err := libcni.NetworkConfFromBytes(list)
		if err != nil {
			return
		}
		cni := libcni.NewCNIConfig(network.SplitPath(network.DefaultCNIPath), nil)
		for _, id := range *ids {
			ns := filepath.Join(network.DefaultNetNSDir, id)
			rt := &libcni.RuntimeConf{ContainerID: id, NetNS: ns, IfName: network.IfName}
			if _, err := os.Lstat(ns); err != nil {
				rt.NetNS = "" // gone: the plugins free what they hold without it
			}
			if _, cached, err := cni.GetNetworkListCachedConfig(conf, rt); err == nil && cached != nil {
				// The ADD's port mappings: portmap removes its chains
				// only when it is given them.
				rt.CapabilityArgs = cached.CapabilityArgs
			}
			_ = cni.DelNetworkList(ctx(t), conf, rt)
			if rt.NetNS != "" {
				_ = exec.Command("ip", "netns", "del", id).Run()
			}
		}
	})
	return ids
}

// bridgeWebJob is an exec job in bridge mode: busybox httpd serves the
// task's local/ on port 8080 inside the allocation's namespace, mapped
// from a dynamic host port. It writes what it sees of its network
// (interfaces, NOMAD_ALLOC_IP_http) into the files it serves.
func bridgeWebJob(id string) string {
	script := `echo hello-bridge > /local/index.html; ls /sys/class/net > /local/ifaces; ` +
		`echo "$NOMAD_ALLOC_IP_http $NOMAD_ALLOC_PORT_http $NOMAD_HOST_PORT_http" > /local/env; ` +
		`exec /bin/busybox httpd -f -p 8080 -h /local`
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
    }
    service {
      name     = "%[1]s-host"
      port     = "http"
      provider = "nomad"
      check {
        name     = "index"
        type     = "http"
        path     = "/index.html"
        interval = "1s"
        timeout  = "1s"
      }
    }
    task "app" {
      driver = "exec"
      config {
        command = "/bin/busybox"
        args    = ["sh", "-c", %[2]q]
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
`, id, script)
}

// hostPort is the allocation's host address of a port label.
func hostPort(t testing.TB, c *apiclient.Client, allocID, label string) string {
	t.Helper()
	a, _, err := c.Allocations().Info(ctx(t), allocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.AllocatedResources != nil {
		for _, p := range a.AllocatedResources.Shared.Ports {
			if p.Label == label {
				ip := p.HostIP
				if ip == "" {
					ip = "127.0.0.1"
				}
				return net.JoinHostPort(ip, strconv.Itoa(p.Value))
			}
		}
	}
	t.Fatalf("alloc %s has no port %q: %s", allocID, label, jsonString(a))
	return ""
}

// httpGet fetches a URL, retrying until it answers 200 (bounded).
func httpGet(t testing.TB, url string) string {
	t.Helper()
	var body string
	hc := &http.Client{Timeout: 3 * time.Second}
	eventually(t, 30*time.Second, "GET "+url, func() error {
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d: %q", resp.StatusCode, b)
		}
		body = string(b)
		return nil
	})
	return body
}

// netLeftovers lists what of an allocation's network the host still
// holds: its namespace, iptables rules naming it or its address, its
// host-local lease.
func netLeftovers(t testing.TB, allocID, addr string) []string {
	t.Helper()
	var out []string
	if _, err := os.Lstat(filepath.Join(network.DefaultNetNSDir, allocID)); err == nil {
		out = append(out, "namespace")
	}
	if b, err := exec.Command("ip", "netns", "list").Output(); err == nil && strings.Contains(string(b), allocID) {
		out = append(out, "ip netns: "+allocID)
	}
	for _, table := range []string{"nat", "filter"} {
		b, err := exec.Command("iptables-save", "-t", table).CombinedOutput()
		if err != nil {
			t.Fatalf("iptables-save: %v: %s", err, b)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, allocID) || (addr != "" && (strings.Contains(l, addr+"/32") || strings.Contains(l, "--to-destination "+addr+":"))) {
				out = append(out, table+": "+l)
			}
		}
	}
	if addr != "" {
		if b, err := os.ReadFile(filepath.Join(network.IPAMDataDir, network.NetworkName, addr)); err == nil && strings.HasPrefix(string(b), allocID) {
			out = append(out, "host-local lease "+addr)
		}
	}
	return out
}

// TestBridgeExecJobServesOnItsMappedPort runs an exec job in bridge mode
// on a dev agent: the task has its own eth0 and address in the
// allocation's namespace, serves on its "to" port there, and is reached
// from the host at its mapped host port; once the job stops, the
// namespace, its iptables rules and its address lease are gone.
func TestBridgeExecJobServesOnItsMappedPort(t *testing.T) {
	requireBridge(t)
	ids := cleanupBridge(t)
	p := startDevAgent(t)
	c := p.client()
	alloc := runJobFile(t, p, bridgeWebJob("bridge-web"), "running")
	*ids = append(*ids, alloc.ID)
	stopJobProcs(t, c, "bridge-web")
	addr := hostPort(t, c, alloc.ID, "http")
	if got := httpGet(t, "http://"+addr+"/index.html"); got != "hello-bridge\n" {
		t.Fatalf("index: %q", got)
	}
	if got := httpGet(t, "http://"+addr+"/ifaces"); strings.Fields(got)[0] != "eth0" || !strings.Contains(got, "lo") {
		t.Fatalf("the task's interfaces: %q", got)
	}
	env := strings.Fields(httpGet(t, "http://"+addr+"/env"))
	_, port, _ := net.SplitHostPort(addr)
	if len(env) != 3 || !strings.HasPrefix(env[0], "172.26.") || env[1] != "8080" || env[2] != port {
		t.Fatalf("NOMAD_ALLOC_IP_http, NOMAD_ALLOC_PORT_http, NOMAD_HOST_PORT_http: %q", env)
	}
	// The namespace is the allocation's, as `ip netns` lists it, and the
	// task answers on its address directly too.
	if out, err := exec.Command("ip", "netns", "list").Output(); err != nil || !strings.Contains(string(out), alloc.ID) {
		t.Fatalf("ip netns list: %s %v", out, err)
	}
	if got := httpGet(t, "http://"+net.JoinHostPort(env[0], "8080")+"/index.html"); got != "hello-bridge\n" {
		t.Fatalf("on the allocation's address: %q", got)
	}
	// Services: address_mode "alloc" advertises the allocation's address
	// and its "to" port; the default, the host's and the mapped port.
	for name, want := range map[string]string{"bridge-web-alloc": net.JoinHostPort(env[0], "8080"), "bridge-web-host": addr} {
		eventually(t, 30*time.Second, name+" registered", func() error {
			var regs []*structs.ServiceRegistration
			if _, err := c.Get(ctx(t), "/v1/service/"+name, nil, &regs); err != nil {
				return err
			}
			if len(regs) != 1 || net.JoinHostPort(regs[0].Address, strconv.Itoa(regs[0].Port)) != want {
				return fmt.Errorf("registrations %s, want %s", jsonString(regs), want)
			}
			return nil
		})
	}
	// The http check reaches the task through the mapped host port.
	eventually(t, 30*time.Second, "the check passing", func() error {
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
	if a, _, err := c.Allocations().Info(ctx(t), alloc.ID, nil); err != nil || a.NetworkStatus == nil ||
		a.NetworkStatus.Address != env[0] || a.NetworkStatus.InterfaceName != "eth0" {
		t.Fatalf("the allocation's NetworkStatus: %v %s", err, jsonString(a))
	}

	if _, err := c.Jobs().Deregister(ctx(t), "bridge-web", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the namespace and its rules removed", func() error {
		if left := netLeftovers(t, alloc.ID, env[0]); len(left) > 0 {
			return fmt.Errorf("left: %q", left)
		}
		return nil
	})
}

// TestBridgeRawExecJoinsTheNamespace: a raw_exec task of a bridge group
// runs in the allocation's namespace, as Nomad's raw_exec does, and so
// does an alloc exec session in it.
func TestBridgeRawExecJoinsTheNamespace(t *testing.T) {
	requireBridge(t)
	ids := cleanupBridge(t)
	p := startDevAgent(t)
	c := p.client()
	job := `job "bridge-raw" {
  datacenters = ["dc1"]
  group "g" {
    network {
      mode = "bridge"
    }
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "readlink /proc/self/ns/net; echo started; exec sleep 600"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`
	alloc := runJobFile(t, p, job, "running")
	*ids = append(*ids, alloc.ID)
	stopJobProcs(t, c, "bridge-raw")
	waitLog(t, c, alloc.ID, "started", 1)
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(network.DefaultNetNSDir, alloc.ID), &st); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("net:[%d]", st.Ino)
	if got := strings.Fields(taskLog(t, c, alloc.ID, "app"))[0]; got != want {
		t.Fatalf("the task's network namespace is %s, the allocation's %s", got, want)
	}
	// alloc exec runs there too, as the task.
	var out strings.Builder
	if code, err := c.Allocations().Exec(bounded(t, 30*time.Second), alloc.ID, apiclient.ExecOptions{
		Task: "app", Command: []string{"/bin/readlink", "/proc/self/ns/net"}, Stdout: &out, Stderr: &out,
	}); err != nil || code != 0 || strings.TrimSpace(out.String()) != want {
		t.Fatalf("alloc exec: %d %v %q, want %s", code, err, out.String(), want)
	}
	if _, err := c.Jobs().Deregister(ctx(t), "bridge-raw", false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the namespace removed", func() error {
		if left := netLeftovers(t, alloc.ID, ""); len(left) > 0 {
			return fmt.Errorf("left: %q", left)
		}
		return nil
	})
}

// TestBridgeSetupFailureFailsTheAlloc: a client whose cni_path holds no
// plugins fails a bridge allocation with a Setup Failure event that says
// why, and leaves nothing behind.
func TestBridgeSetupFailureFailsTheAlloc(t *testing.T) {
	requireBridge(t)
	cfg := filepath.Join(t.TempDir(), "client.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("client {\n  cni_path = %q\n}\n", t.TempDir())), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startDevAgent(t, "-config", cfg)
	c := p.client()
	alloc := runJobFile(t, p, strings.Replace(bridgeWebJob("bridge-broken"), `driver = "exec"`, `driver = "raw_exec"`, 1), "failed")
	a, _, err := c.Allocations().Info(ctx(t), alloc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := a.TaskStates["app"]
	if ts == nil || ts.State != structs.TaskStateDead || !ts.Failed || len(ts.Events) == 0 {
		t.Fatalf("task state %s", jsonString(ts))
	}
	ev := ts.Events[len(ts.Events)-1]
	if ev.Type != structs.TaskSetupFailure || !strings.Contains(ev.DisplayMessage, `CNI plugin not found: "loopback"`) {
		t.Fatalf("last event %s", jsonString(ev))
	}
	if left := netLeftovers(t, alloc.ID, ""); len(left) > 0 {
		t.Fatalf("left: %q", left)
	}
}

// TestBridgeNamespaceSurvivesClientSIGKILL: a client killed with SIGKILL
// and started again on its data directory re-attaches to its running
// bridge allocation and keeps its namespace (the task still answers on
// its mapped port); killed once more, and started after the allocation
// is gone, it removes the namespace, rules and lease at start.
func TestBridgeNamespaceSurvivesClientSIGKILL(t *testing.T) {
	requireBridge(t)
	if testing.Short() {
		t.Skip("runs a server and a client agent, the client twice")
	}
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
	startClient := func(name string) *agentProc {
		addr := loopback.Addr(t)
		return startAgentProc(t, name, addr, "-client", "-data-dir", dataDir, "-servers", srvHTTP,
			"-http-addr", addr, "-node", "c1", "-log-level", "debug")
	}
	cl := startClient("c1")
	srv.waitNodeReady(1)
	path := filepath.Join(t.TempDir(), "job.hcl")
	if err := os.WriteFile(path, []byte(bridgeWebJob("bridge-kill")), 0o644); err != nil {
		t.Fatal(err)
	}
	registerJob(t, c, parseJob(t, path))
	stopJobProcs(t, c, "bridge-kill")
	var allocID string
	eventually(t, 60*time.Second, "the job running", func() error {
		allocs, err := jobAllocs(t, c, "bridge-kill")
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
	addr := hostPort(t, c, allocID, "http")
	httpGet(t, "http://"+addr+"/index.html")
	var before syscall.Stat_t
	if err := syscall.Stat(filepath.Join(network.DefaultNetNSDir, allocID), &before); err != nil {
		t.Fatal(err)
	}

	_ = cl.cmd.Process.Signal(syscall.SIGKILL)
	<-cl.done
	again := startClient("c1-again")
	// The restarted client re-attaches, reconciles its namespaces, then
	// registers: the task keeps answering through the same namespace.
	eventually(t, 30*time.Second, "the restarted client registered", func() error {
		logs := again.logs.String()
		if !strings.Contains(logs, "re-attaching to alloc") || !strings.Contains(logs, "node registered") {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	var after syscall.Stat_t
	if err := syscall.Stat(filepath.Join(network.DefaultNetNSDir, allocID), &after); err != nil || after.Ino != before.Ino {
		t.Fatalf("the namespace after the restart: %v (inode %d, was %d)", err, after.Ino, before.Ino)
	}
	if got := httpGet(t, "http://"+addr+"/index.html"); got != "hello-bridge\n" {
		t.Fatalf("after the restart: %q", got)
	}
	a, _, err := c.Allocations().Info(ctx(t), allocID, nil)
	if err != nil || a.ClientStatus != structs.AllocClientStatusRunning {
		t.Fatalf("alloc after the restart: %v %s", err, jsonString(a))
	}
	addrInNS := a.NetworkStatus.Address

	// Killed again, and this time the allocation is gone when it comes
	// back (its task killed, its directory removed, the job stopped):
	// the client's reconcile at start removes the namespace, its rules
	// and its address lease.
	_ = again.cmd.Process.Signal(syscall.SIGKILL)
	<-again.done
	killAllocProcs(allocID)
	if _, err := c.Jobs().Deregister(ctx(t), "bridge-kill", false); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dataDir, "alloc", allocID)); err != nil {
		t.Fatal(err)
	}
	if left := netLeftovers(t, allocID, addrInNS); len(left) == 0 {
		t.Fatal("nothing of the allocation's network left before the restart")
	}
	third := startClient("c1-third")
	eventually(t, 30*time.Second, "the namespace reconciled away", func() error {
		if left := netLeftovers(t, allocID, addrInNS); len(left) > 0 {
			return fmt.Errorf("left: %q", left)
		}
		if !strings.Contains(third.logs.String(), "removed the networks of allocations no longer running") {
			return fmt.Errorf("no reconcile in the client's log")
		}
		return nil
	})
}
