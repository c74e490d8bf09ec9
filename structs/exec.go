package structs

import (
	"slices"
	"sort"
	"strings"
)

// ExecConfig is an exec task's config block, as Nomad's exec driver reads
// it (website/drivers/exec.md).
type ExecConfig struct {
	Command string
	Args    []string
	// PidMode and IpcMode are "private", "host" or "" (the client's
	// default).
	PidMode string
	IpcMode string
	// CapAdd and CapDrop are capability names, lower case without CAP_
	// ("all" stands for every one).
	CapAdd  []string
	CapDrop []string
	// WorkDir is the working directory inside the task's root ("": /).
	WorkDir string
}

// execKeys are the exec config keys drover runs.
var execKeys = []string{"command", "args", "pid_mode", "ipc_mode", "cap_add", "cap_drop", "work_dir"}

// ExecCapabilities are the capability names cap_add, cap_drop and the
// client's allow_caps may give ("all" besides), lower case without CAP_.
var ExecCapabilities = []string{
	"audit_control", "audit_read", "audit_write", "block_suspend", "bpf", "checkpoint_restore",
	"chown", "dac_override", "dac_read_search", "fowner", "fsetid", "ipc_lock", "ipc_owner",
	"kill", "lease", "linux_immutable", "mac_admin", "mac_override", "mknod", "net_admin",
	"net_bind_service", "net_broadcast", "net_raw", "perfmon", "setfcap", "setgid", "setpcap",
	"setuid", "sys_admin", "sys_boot", "sys_chroot", "sys_module", "sys_nice", "sys_pacct",
	"sys_ptrace", "sys_rawio", "sys_resource", "sys_time", "sys_tty_config", "syslog", "wake_alarm",
}

// NormCapability turns a capability as written ("CAP_NET_ADMIN",
// "net_admin", "ALL") into its name in ExecCapabilities, or reports it
// unknown.
func NormCapability(s string) (string, bool) {
	n := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "cap_")
	return n, n == "all" || slices.Contains(ExecCapabilities, n)
}

// ParseExecConfig reads an exec task's config block. It returns every
// problem it finds, each naming its key; the config is then what could be
// read and must not be run.
func ParseExecConfig(m map[string]any) (*ExecConfig, []ConfigError) {
	p := &dockerParser{}
	c := &ExecConfig{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		switch k {
		case "command":
			c.Command = p.str(k, v)
		case "args":
			c.Args = p.strs(k, v)
		case "pid_mode":
			c.PidMode = p.mode(k, v)
		case "ipc_mode":
			c.IpcMode = p.mode(k, v)
		case "cap_add":
			c.CapAdd = p.caps(k, v)
		case "cap_drop":
			c.CapDrop = p.caps(k, v)
		case "work_dir":
			c.WorkDir = p.workDir(k, v)
		default:
			p.errf(k, "is not an exec driver option%s", closest(k, execKeys))
		}
	}
	if _, ok := m["command"]; !ok {
		p.errf("command", "is required")
	} else if c.Command == "" && !p.failed("command") {
		p.errf("command", "must not be empty")
	}
	return c, p.errs
}

// workDir reads a working directory inside the task's root (exec's and
// java's work_dir).
func (p *dockerParser) workDir(key string, v any) string {
	s := p.str(key, v)
	if s != "" && !strings.HasPrefix(s, "/") {
		p.errf(key, "must be an absolute path inside the task's root (got %q)", s)
	}
	return s
}

func (p *dockerParser) mode(key string, v any) string {
	s := p.str(key, v)
	switch s {
	case "", "private", "host":
	default:
		p.errf(key, "must be \"private\" or \"host\" (got %q)", s)
	}
	return s
}

func (p *dockerParser) caps(key string, v any) []string {
	l := p.strs(key, v)
	for i, s := range l {
		n, ok := NormCapability(s)
		if !ok {
			p.errf(key, "names an unknown capability %q", s)
		}
		l[i] = n
	}
	return l
}
