package exec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
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

// Command is what a task runs in its container: its command line and
// working directory inside its root, its namespace modes ("" for the
// client's default) and the capabilities it adds and drops. exec's driver
// block is one as written; the java driver builds one around the JVM.
type Command = structs.ExecConfig

// CommandFunc makes the Command of a task from its driver block; its
// errors wrap drivers.ErrInvalidConfig and name the block's key. It is
// called when the task starts and again for each command run inside it
// (alloc exec, script checks), which take its working directory.
type CommandFunc func(config map[string]any) (Command, error)

// taskConfig is exec's driver block, as Nomad's.
type taskConfig = Command

// parseConfig reads an exec task's driver block. Modes are checked, not
// defaulted (the client's defaults fill an empty one).
func parseConfig(m map[string]any) (taskConfig, error) {
	c, errs := structs.ParseExecConfig(m)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return taskConfig{}, fmt.Errorf("%w: exec %s", drivers.ErrInvalidConfig, strings.Join(msgs, "; "))
	}
	return *c, nil
}

// checkMode checks a mode of the plugin block of driver (exec, java).
func checkMode(driver, key, v string) error {
	switch v {
	case "", ModePrivate, ModeHost:
		return nil
	}
	return fmt.Errorf("%w: %s %s must be %q or %q (got %q)", drivers.ErrInvalidConfig, driver, key, ModePrivate, ModeHost, v)
}

// capList normalises the allow_caps of driver's plugin block.
func capList(driver string, l []string) ([]string, error) {
	out := make([]string, len(l))
	for i, s := range l {
		n, ok := structs.NormCapability(s)
		if !ok {
			return nil, fmt.Errorf("%w: %s allow_caps[%d]: unknown capability %q", drivers.ErrInvalidConfig, driver, i, s)
		}
		out[i] = n
	}
	return out, nil
}

// taskCaps computes the task's capabilities as Nomad's exec driver does:
// the client's allow_caps, plus cap_add (each of which allow_caps must
// hold), less cap_drop. Names come back as CAP_X, sorted.
func taskCaps(allow, add, drop []string) ([]string, error) {
	allowed := map[string]bool{}
	for _, c := range allow {
		if c == "all" {
			for _, a := range structs.ExecCapabilities {
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
			for _, a := range structs.ExecCapabilities {
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
