package loopback

import "testing"

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
