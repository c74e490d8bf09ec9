package loopback

import (
	"net"
	"strconv"
	"testing"
)

// Many calls never return the same address twice.
func TestAddrNeverRepeats(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		a := Addr(t)
		if seen[a] {
			t.Fatalf("%s handed out twice", a)
		}
		seen[a] = true
	}
}

// The ports come from below the kernel's ephemeral range while it has free
// ones there, out of reach of other processes' outgoing connections.
func TestAddrBelowEphemeralRange(t *testing.T) {
	for range 20 {
		_, port, err := net.SplitHostPort(Addr(t))
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := strconv.Atoi(port); p < lowPort || p > highPort {
			t.Fatalf("port %d, want one in %d–%d", p, lowPort, highPort)
		}
	}
}
