package network

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
)

// Manager sets up and tears down allocations' networks. Its methods are
// safe for concurrent use; calls for one allocation must not overlap.
type Manager struct {
	cfg      Config
	conflist []byte
	cni      *libcni.CNIConfig

	adminOnce sync.Once
	adminErr  error
}

// New checks cfg and returns a Manager. It creates nothing: the first
// Setup does.
func New(cfg Config) (*Manager, error) {
	cfg = cfg.withDefaults()
	if cfg.StateDir == "" {
		return nil, errors.New("network: state dir required")
	}
	list, err := Conflist(BridgeConf{BridgeName: cfg.BridgeName, Subnet: cfg.Subnet, HairpinMode: cfg.HairpinMode})
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, conflist: list}
	if cfg.CacheDir != "" {
		m.cni = libcni.NewCNIConfigWithCacheDir(cfg.CNIPath, cfg.CacheDir, nil)
	} else {
		m.cni = libcni.NewCNIConfig(cfg.CNIPath, nil)
	}
	return m, nil
}

// Config returns the manager's configuration, defaults filled.
func (m *Manager) Config() Config { return m.cfg }

// CheckPlugins reports the first plugin of the bridge network that is in
// none of the cni_path directories.
func (m *Manager) CheckPlugins() error {
	for _, p := range Plugins {
		if _, err := invoke.FindInPath(p, m.cfg.CNIPath); err != nil {
			return fmt.Errorf("%w: %q in cni_path %s (install the CNI reference plugins, such as Debian's containernetworking-plugins)",
				ErrPluginMissing, p, strings.Join(m.cfg.CNIPath, ":"))
		}
	}
	return nil
}

// record is what the manager keeps of one allocation's network, written
// before its namespace is made and removed once it is torn down.
type record struct {
	AllocID  string
	NetNS    string
	Ports    []Port
	Conflist json.RawMessage
	Status   *Status `json:",omitempty"`
	// External: the namespace is not the manager's own but one a driver
	// made (docker's pause container, SetupIn); the manager configures
	// it and removes its network, never the namespace itself.
	External bool `json:",omitempty"`
}

func (m *Manager) recordPath(allocID string) string {
	return filepath.Join(m.cfg.StateDir, allocID+".json")
}

func (m *Manager) writeRecord(r *record) error {
	if err := os.MkdirAll(m.cfg.StateDir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := m.recordPath(r.AllocID) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, m.recordPath(r.AllocID))
}

func (m *Manager) readRecord(allocID string) (*record, error) {
	b, err := os.ReadFile(m.recordPath(allocID))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, allocID)
	}
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("network record %s: %w", allocID, err)
	}
	return &r, nil
}

// validAllocID keeps an allocation ID usable as a file name.
func validAllocID(id string) error {
	if id == "" || len(id) > 64 || strings.ContainsAny(id, "/\\\x00") || id == "." || id == ".." {
		return fmt.Errorf("network: invalid allocation ID %q", id)
	}
	return nil
}

// runtimeConf is the CNI runtime configuration of an allocation: the
// allocation's ID as the container's, its namespace, eth0, and its
// ports as portmap's portMappings (each for TCP and UDP, as Nomad's).
func runtimeConf(r *record) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{ContainerID: r.AllocID, NetNS: r.NetNS, IfName: IfName}
	if len(r.Ports) > 0 {
		var maps []map[string]any
		for _, p := range r.Ports {
			for _, proto := range []string{"tcp", "udp"} {
				pm := map[string]any{"hostPort": p.HostPort, "containerPort": p.ContainerPort, "protocol": proto}
				if p.HostIP != "" {
					pm["hostIP"] = p.HostIP
				}
				maps = append(maps, pm)
			}
		}
		rt.CapabilityArgs = map[string]any{"portMappings": maps}
	}
	return rt
}

// Setup makes the allocation's namespace and adds it to the bridge
// network, its ports mapped. On failure nothing is left behind.
func (m *Manager) Setup(ctx context.Context, allocID string, ports []Port) (*Status, error) {
	return m.setup(ctx, allocID, "", ports)
}

// SetupIn adds the namespace at netns, which a driver made for the
// allocation (docker's pause container), to the bridge network, its
// ports mapped, as Nomad configures the namespace of its docker
// driver's pause container. Teardown then removes the network but
// leaves the namespace to its maker. On failure the network is removed.
func (m *Manager) SetupIn(ctx context.Context, allocID, netns string, ports []Port) (*Status, error) {
	if netns == "" || !filepath.IsAbs(netns) {
		return nil, fmt.Errorf("%w: the namespace path %q is not absolute", ErrSetup, netns)
	}
	if !isNetNS(netns) {
		return nil, fmt.Errorf("%w: %s is not a network namespace", ErrSetup, netns)
	}
	return m.setup(ctx, allocID, netns, ports)
}

// setup is Setup (netns "": the manager makes the namespace) and
// SetupIn.
func (m *Manager) setup(ctx context.Context, allocID, netns string, ports []Port) (*Status, error) {
	if err := validAllocID(allocID); err != nil {
		return nil, err
	}
	if err := m.CheckPlugins(); err != nil {
		return nil, err
	}
	if err := checkPortsFree(ports); err != nil {
		return nil, err
	}
	if err := m.ensureAdminChain(); err != nil {
		return nil, err
	}
	r := &record{AllocID: allocID, NetNS: netns, External: netns != "", Ports: ports, Conflist: m.conflist}
	if !r.External {
		r.NetNS = filepath.Join(m.cfg.NetNSDir, allocID)
	}
	if err := m.writeRecord(r); err != nil {
		return nil, fmt.Errorf("%w: saving its record: %w", ErrSetup, err)
	}
	fail := func(err error) (*Status, error) {
		if terr := m.teardown(context.WithoutCancel(ctx), r); terr != nil {
			err = errors.Join(err, terr)
		}
		return nil, err
	}
	if !r.External {
		if err := createNetNS(r.NetNS); err != nil {
			return fail(fmt.Errorf("%w: creating its namespace: %w", ErrSetup, err))
		}
	}
	list, err := libcni.NetworkConfFromBytes(r.Conflist)
	if err != nil {
		return fail(fmt.Errorf("%w: %w", ErrSetup, err))
	}
	res, err := m.cni.AddNetworkList(ctx, list, runtimeConf(r))
	if err != nil {
		return fail(fmt.Errorf("%w: %w", ErrSetup, err))
	}
	st, err := statusOf(res, r.NetNS)
	if err != nil {
		return fail(fmt.Errorf("%w: %w", ErrSetup, err))
	}
	r.Status = st
	if err := m.writeRecord(r); err != nil {
		return fail(fmt.Errorf("%w: saving its record: %w", ErrSetup, err))
	}
	return st, nil
}

// statusOf reads the allocation's interface and IPv4 address from a
// CNI result: the first IPv4 address of an interface in the namespace.
func statusOf(res types.Result, nsPath string) (*Status, error) {
	r, err := types100.NewResultFromResult(res)
	if err != nil {
		return nil, fmt.Errorf("reading the CNI result: %w", err)
	}
	for _, ip := range r.IPs {
		if ip.Interface == nil || *ip.Interface < 0 || *ip.Interface >= len(r.Interfaces) || ip.Address.IP.To4() == nil {
			continue
		}
		if itf := r.Interfaces[*ip.Interface]; itf.Sandbox != "" {
			return &Status{NetNSPath: nsPath, InterfaceName: itf.Name, Address: ip.Address.IP.String()}, nil
		}
	}
	return nil, errors.New("the CNI result gives the namespace no IPv4 address")
}

// Status returns the network of an allocation set up before (by this
// client or one before it), if its namespace still exists.
func (m *Manager) Status(allocID string) (*Status, error) {
	if err := validAllocID(allocID); err != nil {
		return nil, err
	}
	r, err := m.readRecord(allocID)
	if err != nil {
		return nil, err
	}
	if r.Status == nil || !isNetNS(r.NetNS) {
		return nil, fmt.Errorf("%w: %s (its namespace is gone)", ErrNotFound, allocID)
	}
	return r.Status, nil
}

// Teardown removes the allocation's network: CNI DEL (its address, its
// iptables rules and port mappings), then its namespace and record.
// An allocation without a network is no error.
func (m *Manager) Teardown(ctx context.Context, allocID string) error {
	if err := validAllocID(allocID); err != nil {
		return err
	}
	r, err := m.readRecord(allocID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return m.teardown(ctx, r)
}

func (m *Manager) teardown(ctx context.Context, r *record) error {
	var errs []error
	if list, err := libcni.NetworkConfFromBytes(r.Conflist); err != nil {
		errs = append(errs, err)
	} else {
		rt := runtimeConf(r)
		if res, err := m.cni.GetNetworkListCachedResult(list, rt); err != nil || res == nil {
			// An ADD that failed or was cut short (a client killed during
			// it) cached no result: the firewall plugin's DEL cannot learn
			// the address it accepted, so its rules go by hand, while the
			// address is still leased (no other allocation has it yet).
			if addr := nsAddress(r.NetNS); addr != "" {
				dropForwardRules(addr)
			}
		}
		gone := !isNetNS(r.NetNS)
		if gone {
			// The plugins free the address and rules without it.
			rt.NetNS = ""
		}
		if err := m.cni.DelNetworkList(ctx, list, rt); err != nil {
			errs = append(errs, fmt.Errorf("CNI DEL: %w", err))
		} else if gone {
			// All but the bridge plugin's masquerading, which it removes
			// only from inside the namespace (a pause container that
			// died, or was removed while the client was down).
			dropMasqRules(r.AllocID)
		}
	}
	if !r.External {
		if err := removeNetNS(r.NetNS); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if err := os.Remove(m.recordPath(r.AllocID)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Reconcile runs when the client starts, after it has restored its
// allocations: it tears down the network of every allocation it has a
// record of that live does not report as still running (a client killed
// while they stopped leaves them behind). It returns the allocations it
// removed.
func (m *Manager) Reconcile(ctx context.Context, live func(allocID string) bool) ([]string, error) {
	ents, err := os.ReadDir(m.cfg.StateDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || validAllocID(id) != nil || live(id) {
			continue
		}
		r, err := m.readRecord(id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := m.teardown(ctx, r); err != nil {
			errs = append(errs, fmt.Errorf("alloc %s: %w", id, err))
			continue
		}
		removed = append(removed, id)
	}
	return removed, errors.Join(errs...)
}

// ensureAdminChain makes AdminChain accept traffic to the bridge's
// subnet (once per manager), as Nomad's client does before its first
// CNI ADD.
func (m *Manager) ensureAdminChain() error {
	m.adminOnce.Do(func() {
		ipt := func(args ...string) error {
			out, err := exec.Command("iptables", append([]string{"-w", "5"}, args...)...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
			}
			return nil
		}
		if ipt("-t", "filter", "-n", "-L", AdminChain) != nil {
			if err := ipt("-t", "filter", "-N", AdminChain); err != nil && ipt("-t", "filter", "-n", "-L", AdminChain) != nil {
				m.adminErr = err
				return
			}
		}
		rule := []string{AdminChain, "-o", m.cfg.BridgeName, "-d", m.cfg.Subnet, "-j", "ACCEPT"}
		if ipt(append([]string{"-t", "filter", "-C"}, rule...)...) != nil {
			m.adminErr = ipt(append([]string{"-t", "filter", "-A"}, rule...)...)
		}
	})
	if m.adminErr != nil {
		return fmt.Errorf("%w: %w", ErrSetup, m.adminErr)
	}
	return nil
}

// checkPortsFree fails when another process already listens on a host
// port the allocation maps: portmap would take its traffic silently.
func checkPortsFree(ports []Port) error {
	for _, p := range ports {
		addr := net.JoinHostPort(p.HostIP, strconv.Itoa(p.HostPort))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%w: port %q (%s): %w", ErrPortInUse, p.Label, addr, err)
		}
		l.Close()
		c, err := net.ListenPacket("udp", addr)
		if err != nil {
			return fmt.Errorf("%w: port %q (%s/udp): %w", ErrPortInUse, p.Label, addr, err)
		}
		c.Close()
	}
	return nil
}

// nsAddress is the IPv4 address of IfName in the namespace at path, ""
// when it has none.
func nsAddress(path string) string {
	if !isNetNS(path) {
		return ""
	}
	var addr string
	withNetNS(path, func() error {
		itf, err := net.InterfaceByName(IfName)
		if err != nil {
			return err
		}
		addrs, err := itf.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				addr = n.IP.String()
				break
			}
		}
		return err
	})
	return addr
}

// dropForwardRules removes the firewall plugin's rules for addr (those
// its ADD writes in CNI-FORWARD), if present.
func dropForwardRules(addr string) {
	for _, rule := range [][]string{
		{"-d", addr + "/32", "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"},
		{"-s", addr + "/32", "-j", "ACCEPT"},
	} {
		args := append([]string{"-w", "5", "-t", "filter", "-D", "CNI-FORWARD"}, rule...)
		exec.Command("iptables", args...).Run()
	}
}

// dropMasqRules removes the bridge plugin's masquerading of an
// allocation (its POSTROUTING jump, commented with the network's name
// and the allocation's ID, and the chain it jumps to), if present.
func dropMasqRules(allocID string) {
	out, err := exec.Command("iptables-save", "-t", "nat").Output()
	if err != nil {
		return
	}
	comment := fmt.Sprintf("name: %q id: %q", NetworkName, allocID)
	marker := strings.ReplaceAll(comment, `"`, `\"`)
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "-A POSTROUTING ") || !strings.Contains(l, marker) {
			continue
		}
		f := strings.Fields(l)
		var src, chain string
		for i := 0; i+1 < len(f); i++ {
			switch f[i] {
			case "-s":
				src = f[i+1]
			case "-j":
				chain = f[i+1]
			}
		}
		if src == "" || !strings.HasPrefix(chain, "CNI-") {
			continue
		}
		ipt := func(args ...string) {
			exec.Command("iptables", append([]string{"-w", "5", "-t", "nat"}, args...)...).Run()
		}
		ipt("-D", "POSTROUTING", "-s", src, "-m", "comment", "--comment", comment, "-j", chain)
		ipt("-F", chain)
		ipt("-X", chain)
	}
}
