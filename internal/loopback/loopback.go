// Package loopback hands tests free TCP addresses on 127.0.0.1.
package loopback

import (
	"net"
	"sync"
	"testing"
)

// handedOut holds every address Addr has returned in this process: a port
// closed at once may be handed out again by the kernel, and two servers
// given the same one fail to start.
var handedOut sync.Map

// Addr returns a free address on 127.0.0.1 that no earlier call in this
// process returned.
func Addr(tb testing.TB) string {
	tb.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if _, dup := handedOut.LoadOrStore(addr, true); !dup {
			return addr
		}
	}
	tb.Fatal("loopback: no fresh port in 100 tries")
	return ""
}
