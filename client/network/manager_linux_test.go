package network

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/invoke"
)

// needBridge skips unless the host can run bridge networks (root, the
// CNI plugins, iptables), or fails when DROVER_REQUIRE_ISOLATION=1.
func needBridge(t testing.TB) {
	t.Helper()
	reason := ""
	switch {
	case os.Geteuid() != 0:
		reason = "bridge networking needs root"
	default:
		if _, err := exec.LookPath("iptables"); err != nil {
			reason = "iptables is not installed"
		}
		for _, p := range Plugins {
			if _, err := invoke.FindInPath(p, SplitPath(DefaultCNIPath)); err != nil && reason == "" {
				reason = fmt.Sprintf("CNI plugin %s is not in %s (containernetworking-plugins)", p, DefaultCNIPath)
			}
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

func testAllocID(t testing.TB) string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func inNetNS(path string, fn func() error) error { return withNetNS(path, fn) }

func newTestManager(t testing.TB) *Manager {
	m, err := New(Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// leftovers lists what of an allocation's network remains on the host.
func leftovers(t testing.TB, m *Manager, allocID, addr string) []string {
	var out []string
	if _, err := os.Lstat(filepath.Join(m.cfg.NetNSDir, allocID)); err == nil {
		out = append(out, "namespace "+allocID)
	}
	if _, err := os.Stat(m.recordPath(allocID)); err == nil {
		out = append(out, "record")
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
		if _, err := os.Stat(filepath.Join(IPAMDataDir, NetworkName, addr)); err == nil {
			out = append(out, "host-local lease "+addr)
		}
	}
	return out
}

func TestBridgeServesMappedPortAndTearsDown(t *testing.T) {
	needBridge(t)
	m := newTestManager(t)
	id := testAllocID(t)
	hostPort := freePort(t)
	ctx := context.Background()
	st, err := m.Setup(ctx, id, []Port{{Label: "http", HostIP: "127.0.0.1", HostPort: hostPort, ContainerPort: 8080}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Teardown(ctx, id) })
	if st.InterfaceName != "eth0" || !strings.HasPrefix(st.Address, "172.26.") || st.NetNSPath != "/var/run/netns/"+id {
		t.Fatalf("status %+v", st)
	}
	var l net.Listener
	var ifaces []string
	if err := inNetNS(st.NetNSPath, func() error {
		its, err := net.Interfaces()
		for _, it := range its {
			ifaces = append(ifaces, it.Name)
		}
		if err != nil {
			return err
		}
		l, err = net.Listen("tcp", ":8080")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ifaces, ",") != "lo,eth0" {
		t.Fatalf("interfaces in the namespace: %v", ifaces)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "inside") })}
	go srv.Serve(l)
	defer srv.Close()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/", hostPort))
	if err != nil {
		t.Fatalf("host port %d: %v", hostPort, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "inside" {
		t.Fatalf("got %q", b)
	}
	if got, err := m.Status(id); err != nil || *got != *st {
		t.Fatalf("Status: %+v, %v", got, err)
	}
	srv.Close()
	if err := m.Teardown(ctx, id); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, m, id, st.Address); len(left) > 0 {
		t.Fatalf("left after teardown: %q", left)
	}
	if _, err := m.Status(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Status after teardown: %v", err)
	}
}

func TestBridgeReconcileKeepsLiveRemovesGone(t *testing.T) {
	needBridge(t)
	m := newTestManager(t)
	ctx := context.Background()
	live, gone := testAllocID(t), testAllocID(t)
	stLive, err := m.Setup(ctx, live, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Teardown(ctx, live) })
	stGone, err := m.Setup(ctx, gone, []Port{{Label: "x", HostPort: freePort(t), ContainerPort: 80}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Teardown(ctx, gone) })
	// A new manager on the same state directory: a restarted client.
	m2, err := New(Config{StateDir: m.cfg.StateDir})
	if err != nil {
		t.Fatal(err)
	}
	removed, err := m2.Reconcile(ctx, func(id string) bool { return id == live })
	if err != nil || len(removed) != 1 || removed[0] != gone {
		t.Fatalf("Reconcile removed %v, %v", removed, err)
	}
	if left := leftovers(t, m2, gone, stGone.Address); len(left) > 0 {
		t.Fatalf("left of the gone allocation: %q", left)
	}
	if st, err := m2.Status(live); err != nil || st.Address != stLive.Address {
		t.Fatalf("live allocation's network: %+v, %v", st, err)
	}
}

func TestBridgeFaultsLeaveNothing(t *testing.T) {
	needBridge(t)
	ctx := context.Background()
	t.Run("plugin missing", func(t *testing.T) {
		m, err := New(Config{StateDir: t.TempDir(), CNIPath: []string{t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		id := testAllocID(t)
		_, err = m.Setup(ctx, id, nil)
		if !errors.Is(err, ErrPluginMissing) || !strings.Contains(err.Error(), `"loopback"`) {
			t.Fatalf("error %v", err)
		}
		if left := leftovers(t, m, id, ""); len(left) > 0 {
			t.Fatalf("left: %q", left)
		}
	})
	t.Run("plugin fails", func(t *testing.T) {
		dir := t.TempDir()
		for _, p := range Plugins {
			src, _ := invoke.FindInPath(p, SplitPath(DefaultCNIPath))
			if p == "portmap" {
				os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n[ \"$CNI_COMMAND\" = ADD ] || exec "+src+"\necho '{\"cniVersion\":\"0.4.0\",\"code\":11,\"msg\":\"portmap broke on purpose\"}'\nexit 1\n"), 0o755)
				continue
			}
			os.Symlink(src, filepath.Join(dir, p))
		}
		m, err := New(Config{StateDir: t.TempDir(), CNIPath: []string{dir}})
		if err != nil {
			t.Fatal(err)
		}
		id := testAllocID(t)
		before := forwardRules(t)
		_, err = m.Setup(ctx, id, nil)
		if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "portmap broke on purpose") {
			t.Fatalf("error %v", err)
		}
		if left := leftovers(t, m, id, ""); len(left) > 0 {
			t.Fatalf("left: %q", left)
		}
		if after := forwardRules(t); after != before {
			t.Fatalf("CNI-FORWARD before:\n%s\nafter:\n%s", before, after)
		}
		// The address host-local gave is freed: no lease names the alloc.
		ents, _ := os.ReadDir(filepath.Join(IPAMDataDir, NetworkName))
		for _, e := range ents {
			if b, _ := os.ReadFile(filepath.Join(IPAMDataDir, NetworkName, e.Name())); strings.HasPrefix(string(b), id) {
				t.Fatalf("lease %s still held by %s", e.Name(), id)
			}
		}
	})
	t.Run("host port taken", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		m := newTestManager(t)
		id := testAllocID(t)
		port := l.Addr().(*net.TCPAddr).Port
		_, err = m.Setup(ctx, id, []Port{{Label: "http", HostIP: "127.0.0.1", HostPort: port, ContainerPort: 80}})
		if !errors.Is(err, ErrPortInUse) || !strings.Contains(err.Error(), `"http"`) {
			t.Fatalf("error %v", err)
		}
		if left := leftovers(t, m, id, ""); len(left) > 0 {
			t.Fatalf("left: %q", left)
		}
	})
}

// forwardRules lists the firewall plugin's per-address rules.
func forwardRules(t testing.TB) string {
	b, err := exec.Command("iptables", "-w", "5", "-S", "CNI-FORWARD").CombinedOutput()
	if err != nil {
		return ""
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "/32") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
