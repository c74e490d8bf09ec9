package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TLS is the Raft transport's mutual TLS (agent configuration tls.rpc):
// Server configures the listener, Client the dialer. Both come from
// package tlsutil, which makes every peer present a certificate of the
// cluster's CA and, with verify_server_hostname, one naming
// server.<region>.nomad, so that a client agent's certificate cannot
// become a Raft peer.
type TLS struct {
	Server *tls.Config
	Client *tls.Config
}

// tlsStreamLayer is a raft.StreamLayer over TLS: hashicorp/raft's
// NetworkTransport speaks its protocol over the connections it accepts and
// dials, and the TLS handshake verifies the peer before any of it is read.
type tlsStreamLayer struct {
	net.Listener // a tls.Listener
	advertise    net.Addr
	client       *tls.Config
}

var _ raft.StreamLayer = (*tlsStreamLayer)(nil)

// Dial connects to a peer and completes the handshake, so that a peer
// whose certificate is refused fails the dial with the reason.
func (l *tlsStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: l.client}
	conn, err := d.Dial("tcp", string(address))
	if err != nil {
		return nil, fmt.Errorf("raft TLS dial %s: %w", address, err)
	}
	return conn, nil
}

// Accept returns the next connection. The handshake happens on its
// first read, in the transport's goroutine for that connection, so that a
// peer that never completes it holds up no other.
func (l *tlsStreamLayer) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &handshakeConn{Conn: c.(*tls.Conn)}, nil
}

// Addr is the advertised address.
func (l *tlsStreamLayer) Addr() net.Addr { return l.advertise }

// handshakeTimeout bounds a peer's TLS handshake.
const handshakeTimeout = 10 * time.Second

// handshakeConn completes the TLS handshake before its first read or
// write, under a deadline: a peer that connects and says nothing is
// dropped. The transport reads and writes without deadlines, so the
// deadline is lifted once the handshake is done.
type handshakeConn struct {
	*tls.Conn
	once sync.Once
	err  error
}

func (c *handshakeConn) handshake() error {
	c.once.Do(func() {
		_ = c.Conn.SetDeadline(time.Now().Add(handshakeTimeout))
		if err := c.Conn.Handshake(); err != nil {
			c.err = fmt.Errorf("raft TLS handshake with %s refused: %w", c.Conn.RemoteAddr(), err)
		}
		_ = c.Conn.SetDeadline(time.Time{})
	})
	return c.err
}

func (c *handshakeConn) Read(p []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *handshakeConn) Write(p []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// newTLSTransport is newTCPTransport over mutual TLS.
func newTLSTransport(addr string, t *TLS, logger hclog.Logger) (*raft.NetworkTransport, error) {
	if t.Server == nil || t.Client == nil {
		return nil, errors.New("cluster: TLS needs both a server and a client configuration")
	}
	advertise, err := resolveRaftAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", addr, t.Server)
	if err != nil {
		return nil, fmt.Errorf("raft TLS listener on %s: %w", addr, err)
	}
	// With port 0 the bound port is the one to advertise.
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && advertise.Port == 0 {
		advertise = &net.TCPAddr{IP: advertise.IP, Port: tcp.Port}
	}
	layer := &tlsStreamLayer{Listener: ln, advertise: advertise, client: t.Client}
	return raft.NewNetworkTransportWithLogger(layer, 3, 10*time.Second, logger), nil
}

// resolveRaftAddr checks a Raft address other servers can dial.
func resolveRaftAddr(addr string) (*net.TCPAddr, error) {
	if addr == "" {
		return nil, errors.New("cluster: Config.RaftAddr is required")
	}
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("raft address %q: %w", addr, err)
	}
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		return nil, fmt.Errorf("raft address %q: give an address other servers can reach, not a wildcard", addr)
	}
	return tcp, nil
}
