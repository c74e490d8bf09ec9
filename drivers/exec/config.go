package exec

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/droverhq/drover/drivers"
)

// Namespace modes of pid_mode and ipc_mode, as Nomad's.
const (
	ModePrivate = "private"
	ModeHost    = "host"
)

// DefaultUser is the user a task runs as when it names none, as Nomad's
// exec driver.
const DefaultUser = "nobody"

// DefaultChrootEnv is Nomad's default chroot_env: the host directories a
// task sees, by host path, at their path inside the task's root.
func DefaultChrootEnv() map[string]string {
	return map[string]string{
		"/bin":                 "/bin",
		"/etc":                 "/etc",
		"/lib":                 "/lib",
		"/lib32":               "/lib32",
		"/lib64":               "/lib64",
		"/run/resolvconf":      "/run/resolvconf",
		"/run/systemd/resolve": "/run/systemd/resolve",
		"/sbin":                "/sbin",
		"/usr":                 "/usr",
	}
}

// DefaultAllowCaps is Nomad's default allow_caps for exec: Docker's
// default capabilities less NET_RAW.
func DefaultAllowCaps() []string {
	return []string{
		"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod",
		"net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot",
	}
}

// allCaps are the capability names cap_add and cap_drop may give
// ("all" besides), lower case without the CAP_ prefix.
var allCaps = []string{
	"audit_control", "audit_read", "audit_write", "block_suspend", "bpf", "checkpoint_restore",
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid", "ipc_lock", "ipc_owner",
	"kill", "lease", "linux_immutable", "mac_admin", "mac_override", "mknod", "net_admin",
	"net_bind_service", "net_broadcast", "net_raw", "perfmon", "setfcap", "setgid", "setpcap",
	"setuid", "sys_admin", "sys_boot", "sys_chroot", "sys_module", "sys_nice", "sys_pacct",
	"sys_ptrace", "sys_rawio", "sys_resource", "sys_time", "sys_tty_config", "syslog", "wake_alarm",
}

// taskConfig is exec's driver block, as Nomad's.
type taskConfig struct {
	Command string
	Args    []string
	PidMode string
	IpcMode string
	CapAdd  []string
	CapDrop []string
	WorkDir string
}

// parseConfig reads a task's driver block. Modes are checked, not
// defaulted (the client's defaults fill an empty one).
func parseConfig(m map[string]any) (taskConfig, error) {
	var c taskConfig
	for k := range m {
		switch k {
		case "command", "args", "pid_mode", "ipc_mode", "cap_add", "cap_drop", "work_dir":
		default:
			return c, fmt.Errorf("%w: exec has no option %q", drivers.ErrInvalidConfig, k)
		}
	}
	cmd, ok := m["command"].(string)
	if !ok || cmd == "" {
		return c, fmt.Errorf("%w: exec needs a string \"command\"", drivers.ErrInvalidConfig)
	}
	c.Command = cmd
	var err error
	if c.Args, err = stringList(m, "args"); err != nil {
		return c, err
	}
	if c.CapAdd, err = capList(m, "cap_add"); err != nil {
		return c, err
	}
	if c.CapDrop, err = capList(m, "cap_drop"); err != nil {
		return c, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"pid_mode", &c.PidMode}, {"ipc_mode", &c.IpcMode}, {"work_dir", &c.WorkDir}} {
		switch v := m[f.key].(type) {
		case nil:
		case string:
			*f.dst = v
		default:
			return c, fmt.Errorf("%w: exec %q is %T, not a string", drivers.ErrInvalidConfig, f.key, v)
		}
	}
	for key, v := range map[string]string{"pid_mode": c.PidMode, "ipc_mode": c.IpcMode} {
		if err := checkMode(key, v); err != nil {
			return c, err
		}
	}
	if c.WorkDir != "" && !strings.HasPrefix(c.WorkDir, "/") {
		return c, fmt.Errorf("%w: exec work_dir %q must be an absolute path inside the task", drivers.ErrInvalidConfig, c.WorkDir)
	}
	return c, nil
}

func checkMode(key, v string) error {
	switch v {
	case "", ModePrivate, ModeHost:
		return nil
	}
	return fmt.Errorf("%w: exec %s must be %q or %q (got %q)", drivers.ErrInvalidConfig, key, ModePrivate, ModeHost, v)
}

func stringList(m map[string]any, key string) ([]string, error) {
	switch a := m[key].(type) {
	case nil:
		return nil, nil
	case []string:
		return append([]string(nil), a...), nil
	case []any:
		out := make([]string, 0, len(a))
		for i, v := range a {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%w: exec %s[%d] is %T, not a string", drivers.ErrInvalidConfig, key, i, v)
			}
			out = append(out, s)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%w: exec %q is %T, not a list of strings", drivers.ErrInvalidConfig, key, a)
	}
}

// capList reads a list of capability names, normalised to lower case
// without the CAP_ prefix; "all" stands for every capability.
func capList(m map[string]any, key string) ([]string, error) {
	l, err := stringList(m, key)
	if err != nil {
		return nil, err
	}
	for i, s := range l {
		n, err := normCap(s)
		if err != nil {
			return nil, fmt.Errorf("%w: exec %s[%d]: %w", drivers.ErrInvalidConfig, key, i, err)
		}
		l[i] = n
	}
	return l, nil
}

func normCap(s string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	n = strings.TrimPrefix(n, "cap_")
	if n == "all" || slices.Contains(allCaps, n) {
		return n, nil
	}
	return "", fmt.Errorf("unknown capability %q", s)
}

// taskCaps computes the task's capabilities as Nomad's exec driver does:
// the client's allow_caps, plus cap_add (each of which allow_caps must
// hold), less cap_drop. Names come back as CAP_X, sorted.
func taskCaps(allow, add, drop []string) ([]string, error) {
	allowed := map[string]bool{}
	for _, c := range allow {
		if c == "all" {
			for _, a := range allCaps {
				allowed[a] = true
			}
			continue
		}
		allowed[c] = true
	}
	set := map[string]bool{}
	for c := range allowed {
		set[c] = true
	}
	var refused []string
	for _, c := range add {
		if c == "all" {
			for _, a := range allCaps {
				if !allowed[a] {
					refused = append(refused, a)
				}
			}
			continue
		}
		if !allowed[c] {
			refused = append(refused, c)
		}
		set[c] = true
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return nil, fmt.Errorf("%w: cap_add asks for capabilities this client does not allow (allow_caps): %s", drivers.ErrInvalidConfig, strings.Join(refused, ", "))
	}
	for _, c := range drop {
		if c == "all" {
			clear(set)
			break
		}
		delete(set, c)
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, "CAP_"+strings.ToUpper(c))
	}
	sort.Strings(out)
	return out, nil
}
