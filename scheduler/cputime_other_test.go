//go:build !unix

package scheduler

func cpuSeconds() float64 { return 0 }
