//go:build linux

package sim

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// lowerPriority sets the nice value of every thread of this process to n.
// On Linux a nice value belongs to a thread, and a new thread takes its
// creator's, so once every existing thread has it, the threads the Go
// runtime starts later have it too; a second pass catches threads started
// during the first.
func lowerPriority(n int) error {
	for range 2 {
		entries, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("listing threads: %w", err)
		}
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil && err != syscall.ESRCH {
				return fmt.Errorf("setting the priority of thread %d: %w", tid, err)
			}
		}
	}
	return nil
}
