package scheduler

import "testing"

// TestPortSetCountsHolders frees a port only when its last holder goes: a
// node's reserved port stays taken when an alloc that also held it stops.
func TestPortSetCountsHolders(t *testing.T) {
	s := portSet{}
	parsePortSpec("8080", s)
	s.take(8080)
	s.take(9000)
	s.take(9000)
	s.free(8080)
	s.free(9000)
	if !s.has(8080) {
		t.Fatal("reserved port 8080 freed by an alloc")
	}
	if !s.has(9000) {
		t.Fatal("port 9000 freed while a second alloc holds it")
	}
	s.free(9000)
	s.free(7000)
	if s.has(9000) || s.has(7000) || len(s) != 1 {
		t.Fatalf("ports left %v, want only 8080", s)
	}
}
