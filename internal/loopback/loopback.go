// Package loopback hands out free TCP addresses on 127.0.0.1, for tests
// and for the servers the simulator starts.
package loopback

import (
	"errors"
	"net"
	"sync"
)

// handedOut holds every address Free has returned in this process: a port
// closed at once may be handed out again by the kernel, and two servers
// given the same one fail to start.
var handedOut sync.Map

// Free returns a free address on 127.0.0.1 that no earlier call in this
// process returned.
func Free() (string, error) {
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := ln.Addr().String()
		ln.Close()
		if _, dup := handedOut.LoadOrStore(addr, true); !dup {
			return addr, nil
		}
	}
	return "", errors.New("loopback: no fresh port in 100 tries")
}

// TB is the part of testing.TB that Addr uses (this package does not
// import testing: the simulator in drover's binary uses it too).
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Addr is Free for a test: it fails the test when no address is found.
func Addr(tb TB) string {
	tb.Helper()
	addr, err := Free()
	if err != nil {
		tb.Fatal(err)
	}
	return addr
}
