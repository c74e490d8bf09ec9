// Package loopback hands out free TCP addresses on 127.0.0.1, for tests
// and for the servers the simulator starts.
package loopback

import (
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// handedOut holds every address Free has returned in this process: a port
// closed at once may be handed out again by the kernel, and two servers
// given the same one fail to start.
var handedOut sync.Map

// The ports Free tries first lie below Linux's default ephemeral range
// (32768–60999), from which the kernel picks the local port of every
// outgoing connection and of every listener on port 0. A port handed out
// from that range and closed could be taken by any process's next
// connection before the server it was meant for bound it (a test's
// server failed with "address already in use" while a simulator ran
// beside it).
const (
	lowPort  = 20000
	highPort = 32767
)

// Free returns a free address on 127.0.0.1 that no earlier call in this
// process returned: a random port below the ephemeral range that was free
// a moment ago, or else one the kernel picks.
func Free() (string, error) {
	for range 100 {
		port := lowPort + rand.IntN(highPort-lowPort+1)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if _, dup := handedOut.Load(addr); dup {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		if _, dup := handedOut.LoadOrStore(addr, true); !dup {
			return addr, nil
		}
	}
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
