package drivers

import (
	"fmt"
	"strings"
	"syscall"
)

var signals = map[string]syscall.Signal{
	"SIGABRT": syscall.SIGABRT, "SIGALRM": syscall.SIGALRM, "SIGCONT": syscall.SIGCONT,
	"SIGHUP": syscall.SIGHUP, "SIGINT": syscall.SIGINT, "SIGKILL": syscall.SIGKILL,
	"SIGQUIT": syscall.SIGQUIT, "SIGTERM": syscall.SIGTERM, "SIGUSR1": syscall.SIGUSR1,
	"SIGUSR2": syscall.SIGUSR2, "SIGWINCH": syscall.SIGWINCH, "SIGSTOP": syscall.SIGSTOP,
	"SIGTSTP": syscall.SIGTSTP, "SIGTTIN": syscall.SIGTTIN, "SIGTTOU": syscall.SIGTTOU,
	"SIGPIPE": syscall.SIGPIPE, "SIGCHLD": syscall.SIGCHLD, "SIGURG": syscall.SIGURG,
	"SIGIO": syscall.SIGIO, "SIGPROF": syscall.SIGPROF, "SIGVTALRM": syscall.SIGVTALRM,
	"SIGXCPU": syscall.SIGXCPU, "SIGXFSZ": syscall.SIGXFSZ, "SIGTRAP": syscall.SIGTRAP,
	"SIGBUS": syscall.SIGBUS, "SIGFPE": syscall.SIGFPE, "SIGSEGV": syscall.SIGSEGV,
	"SIGILL": syscall.SIGILL, "SIGSYS": syscall.SIGSYS,
}

// ParseSignal maps a signal name ("SIGTERM", "TERM", "sigint") to its
// number. The empty name is SIGTERM, the default kill signal.
func ParseSignal(name string) (syscall.Signal, error) {
	if name == "" {
		return syscall.SIGTERM, nil
	}
	n := strings.ToUpper(name)
	if !strings.HasPrefix(n, "SIG") {
		n = "SIG" + n
	}
	s, ok := signals[n]
	if !ok {
		return 0, fmt.Errorf("%w: unknown signal %q", ErrInvalidConfig, name)
	}
	return s, nil
}
