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
