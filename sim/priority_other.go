//go:build !linux

package sim

// lowerPriority is a no-op where nice values are not per thread.
func lowerPriority(int) error { return nil }
