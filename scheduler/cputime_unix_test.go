//go:build unix

package scheduler

import "syscall"

// cpuSeconds returns the process's user+system CPU time, so benchmarks can
// report throughput per CPU-second on a shared, busy machine.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
