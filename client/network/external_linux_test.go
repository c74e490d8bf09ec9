package network

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A namespace a driver made (docker's pause container) is configured in
// place: its eth0 and address on the bridge, its ports mapped; Status
// finds it; Teardown removes the network and the record but leaves the
// namespace to its maker. A path that is no namespace is refused.
func TestSetupInAnExternalNamespace(t *testing.T) {
	needBridge(t)
	m := newTestManager(t)
	id := testAllocID(t)
	ctx := context.Background()
	// The maker's namespace, bound outside the manager's directory.
	dir := t.TempDir()
	ns := filepath.Join(dir, "sandbox")
	if err := createNetNS(ns); err != nil {
		t.Fatal(err)
	}
	// createNetNS made dir a mount point of its own.
	t.Cleanup(func() { removeNetNS(ns); unix.Unmount(dir, unix.MNT_DETACH) })

	if _, err := m.SetupIn(ctx, id, filepath.Join(t.TempDir(), "nothing"), nil); !errors.Is(err, ErrSetup) {
		t.Fatalf("a path that is no namespace: %v", err)
	}
	if _, err := m.SetupIn(ctx, id, "relative/ns", nil); !errors.Is(err, ErrSetup) {
		t.Fatalf("a relative path: %v", err)
	}
	st, err := m.SetupIn(ctx, id, ns, []Port{{Label: "http", HostIP: "127.0.0.1", HostPort: freePort(t), ContainerPort: 8080}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Teardown(ctx, id) })
	if st.NetNSPath != ns || st.InterfaceName != "eth0" || !strings.HasPrefix(st.Address, "172.26.") {
		t.Fatalf("status %+v", st)
	}
	var ifaces []string
	if err := inNetNS(ns, func() error {
		its, err := net.Interfaces()
		for _, it := range its {
			ifaces = append(ifaces, it.Name)
		}
		return err
	}); err != nil || strings.Join(ifaces, ",") != "lo,eth0" {
		t.Fatalf("interfaces in the namespace: %v %v", ifaces, err)
	}
	if _, err := os.Lstat(filepath.Join(m.cfg.NetNSDir, id)); err == nil {
		t.Fatal("the manager made a namespace of its own")
	}
	if got, err := m.Status(id); err != nil || *got != *st {
		t.Fatalf("Status: %+v, %v", got, err)
	}
	if err := m.Teardown(ctx, id); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, m, id, st.Address); len(left) > 0 {
		t.Fatalf("left after teardown: %q", left)
	}
	if !isNetNS(ns) {
		t.Fatal("teardown removed the maker's namespace")
	}
	ifaces = nil
	inNetNS(ns, func() error {
		its, _ := net.Interfaces()
		for _, it := range its {
			ifaces = append(ifaces, it.Name)
		}
		return nil
	})
	if strings.Join(ifaces, ",") != "lo" {
		t.Fatalf("interfaces left in the namespace: %v", ifaces)
	}

	// A record of a namespace that has gone with its maker is torn down
	// at start (Reconcile) without it.
	if _, err := m.SetupIn(ctx, id, ns, nil); err != nil {
		t.Fatal(err)
	}
	removeNetNS(ns)
	removed, err := m.Reconcile(ctx, func(string) bool { return false })
	if err != nil || len(removed) != 1 || removed[0] != id {
		t.Fatalf("reconcile: %v %v", removed, err)
	}
	if left := leftovers(t, m, id, st.Address); len(left) > 0 {
		t.Fatalf("left after reconcile: %q", left)
	}
}
