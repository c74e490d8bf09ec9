package drivers

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// StartInNetNS calls start on a thread that has joined the network
// namespace at path, so that the process start forks there (and lives
// there); with path "" it calls start as is. The thread is not returned
// to the runtime's pool: it ends with the goroutine that made the call.
// Drivers without a namespace of their own for the task (raw_exec) start
// a bridge allocation's tasks through it, as Nomad's executor does.
func StartInNetNS(path string, start func() error) error {
	if path == "" {
		return start()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with us
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("the allocation's network namespace: %w", err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("joining the allocation's network namespace %s: %w", path, err)
			return
		}
		errc <- start()
	}()
	return <-errc
}
