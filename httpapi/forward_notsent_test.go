package httpapi

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"testing"
)

// TestNotSent: a forwarding that failed before the leader could act on it
// may be sent to the next leader; one that may have been served may not.
func TestNotSent(t *testing.T) {
	op := func(o string, err error) error { return &net.OpError{Op: o, Net: "tcp", Err: err} }
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", op("dial", syscall.ECONNREFUSED), true},
		{"a stopping leader closed the idle connection while the body was written", op("readfrom", op("write", syscall.EPIPE)), true},
		{"reset while writing", fmt.Errorf("proxy: %w", op("write", syscall.ECONNRESET)), true},
		{"not the leader", errNotLeaderAnswer, true},
		{"reset while reading the answer", op("read", syscall.ECONNRESET), false},
		{"timeout", context.DeadlineExceeded, false},
		{"other write error", op("write", syscall.ENOBUFS), false},
	} {
		if got := notSent(c.err); got != c.want {
			t.Errorf("%s: notSent(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
