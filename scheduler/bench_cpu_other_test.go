//go:build !unix

package scheduler_test

// processCPU is not measured here.
func processCPU() float64 { return 0 }
