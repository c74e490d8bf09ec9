package rawexec

import (
	"os"
	"os/signal"
	"syscall"
)

// inheritable are the signals an agent is commonly started with ignored:
// nohup ignores SIGHUP, a shell script's background job SIGINT and
// SIGQUIT, and some supervisors more.
var inheritable = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2}

// sink receives the signals defaultSignals takes over; nothing reads it.
var sink = make(chan os.Signal, 1)

// defaultSignals makes a task start with each signal's default action,
// whatever the agent was started with. An ignored signal stays ignored
// across exec: a task started by an agent run under nohup could not trap
// SIGHUP (a shell's trap on a signal ignored at its start is silently
// void), so a template's change_mode = "signal" never reached it. A
// signal with a handler installed, by contrast, starts with its default
// action in the child; for the agent itself the signal stays without
// effect, as when it was ignored.
func defaultSignals() {
	var taken []os.Signal
	for _, s := range inheritable {
		if signal.Ignored(s) {
			taken = append(taken, s)
		}
	}
	if len(taken) > 0 {
		signal.Notify(sink, taken...)
	}
}
