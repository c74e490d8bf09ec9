//go:build unix

package scheduler_test

import "syscall"

// processCPU returns the process's user+system CPU seconds, so that a
// benchmark can report the CPU a pass costs (collection included) on a
// shared, busy machine, where its wall time says more about the machine.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
