package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// Server is one member of the replicated log.
type Server struct {
	id        string
	logger    hclog.Logger
	raft      *raft.Raft
	transport raft.Transport
	closers   []func() error

	leadership *leadership
	// logs notes the failures to write the Raft log (logstore_watch.go).
	logs *watchedLogStore

	shutdownCh   chan struct{} // closed by Shutdown
	shutdownOnce sync.Once
	shutdownErr  error

	// minBuild gives the servers' lowest build (SetMinServerBuild).
	minBuild atomic.Pointer[func() int]
}

// New opens (or creates) the server's Raft state and starts Raft. A server
// with no Raft state waits, as a non-voter with an empty configuration,
// until Bootstrap is called or a leader adds it.
func New(cfg Config) (*Server, error) {
	if cfg.FSM == nil {
		return nil, errors.New("cluster: Config.FSM is required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	logger = logger.Named("raft")
	s := &Server{logger: logger, shutdownCh: make(chan struct{})}

	id := cfg.ID
	if id == "" {
		if cfg.DataDir == "" {
			return nil, errors.New("cluster: Config.ID or Config.DataDir is required")
		}
		var err error
		if id, err = LoadOrCreateServerID(cfg.DataDir); err != nil {
			return nil, err
		}
	}
	s.id = id

	logs, stable, snaps, err := s.openStores(cfg)
	if err != nil {
		s.closeAll()
		return nil, err
	}
	if cfg.wrapLogs != nil {
		logs = cfg.wrapLogs(logs)
	}
	s.logs = &watchedLogStore{LogStore: &suffixGuard{LogStore: logs}}
	logs = s.logs
	trans := cfg.Transport
	if trans == nil && cfg.TLS != nil {
		if trans, err = newTLSTransport(cfg.RaftAddr, cfg.TLS, logger); err != nil {
			s.closeAll()
			return nil, err
		}
		s.closers = append(s.closers, trans.(*raft.NetworkTransport).Close)
	}
	if trans == nil {
		if trans, err = newTCPTransport(cfg.RaftAddr, logger); err != nil {
			s.closeAll()
			return nil, err
		}
		s.closers = append(s.closers, trans.(*raft.NetworkTransport).Close)
	}
	s.transport = trans

	rc := LANRaftConfig()
	if cfg.Raft != nil {
		c := *cfg.Raft
		rc = &c
	}
	rc.LocalID = raft.ServerID(id)
	rc.Logger = logger
	notify := make(chan bool, 16)
	rc.NotifyCh = notify

	if !cfg.InMemory {
		if err := s.recoverFromPeersJSON(cfg, rc, logs, stable, snaps, trans); err != nil {
			s.closeAll()
			return nil, err
		}
	}

	clamped := guardTransport(trans)
	r, err := raft.NewRaft(rc, cfg.FSM, logs, stable, snaps, clamped)
	if err != nil {
		_ = clamped.(raft.WithClose).Close()
		s.closeAll()
		return nil, fmt.Errorf("starting raft: %w", err)
	}
	s.raft = r
	s.leadership = newLeadership(r, notify, logger)
	return s, nil
}

func (s *Server) openStores(cfg Config) (raft.LogStore, raft.StableStore, raft.SnapshotStore, error) {
	if cfg.InMemory {
		store := raft.NewInmemStore()
		return store, store, raft.NewInmemSnapshotStore(), nil
	}
	dir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, nil, fmt.Errorf("creating raft directory: %w", err)
	}
	// NoFreelistSync: bbolt rebuilds its free list on open instead of
	// writing it on every commit: fewer pages written per batch (serial
	// writes went from about 260/s to 400/s on a three-server benchmark). Timeout: a second process on the
	// same data directory fails instead of waiting for the file lock.
	bolt, err := raftboltdb.New(raftboltdb.Options{
		Path:   filepath.Join(dir, "raft.db"),
		NoSync: cfg.NoSync,
		BoltOptions: &bbolt.Options{
			Timeout: time.Second, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType,
		},
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening raft log store: %w", err)
	}
	s.closers = append(s.closers, bolt.Close)
	snaps, err := raft.NewFileSnapshotStoreWithLogger(filepath.Join(dir, "snapshots"), snapshotsRetained, s.logger)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening snapshot store: %w", err)
	}
	logs, err := raft.NewLogCache(logCacheEntries, bolt)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("raft log cache: %w", err)
	}
	return logs, bolt, snaps, nil
}

// logCacheEntries is how many of the newest log entries are kept in memory
// in front of the bolt store. Raft reads back the entry before each batch
// it sends a follower (for its term), and a follower reads back every entry
// it applies; without the cache each read is a bolt lookup and a full
// decode of the entry, up to half a megabyte for a plan. A place burst of
// 100,000 allocs on three servers had 50 MB of the leader's heap in such
// copies. 64 covers one AppendEntries batch (MaxAppendEntries) and a
// follower's apply lag; at most about 32 MB with entries of half a
// megabyte.
const logCacheEntries = 64

func newTCPTransport(addr string, logger hclog.Logger) (*raft.NetworkTransport, error) {
	tcp, err := resolveRaftAddr(addr)
	if err != nil {
		return nil, err
	}
	t, err := raft.NewTCPTransportWithLogger(addr, tcp, 3, 10*time.Second, logger)
	if err != nil {
		return nil, fmt.Errorf("raft transport on %s: %w", addr, err)
	}
	return t, nil
}

func (s *Server) closeAll() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	s.closers = nil
	return errors.Join(errs...)
}

// ID returns the server's Raft ID.
func (s *Server) ID() string { return s.id }

// Addr returns the server's Raft address as other servers reach it.
func (s *Server) Addr() string { return string(s.transport.LocalAddr()) }

// Shutdown stops leader services, Raft, the transport and the stores. It is
// safe to call more than once.
func (s *Server) Shutdown() error {
	s.shutdownOnce.Do(func() {
		close(s.shutdownCh)
		var errs []error
		if err := s.raft.Shutdown().Error(); err != nil {
			errs = append(errs, err)
		}
		s.leadership.stop()
		errs = append(errs, s.closeAll())
		s.shutdownErr = errors.Join(errs...)
	})
	return s.shutdownErr
}

// HasState reports whether the server already has Raft state (a term, log
// entries or a snapshot): such a server must never bootstrap again.
func (s *Server) HasState() (bool, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return false, translate(err)
	}
	if len(f.Configuration().Servers) > 0 {
		return true, nil
	}
	return s.raft.LastIndex() > 0, nil
}

// Bootstrap writes the initial configuration: the given servers, all
// voters. Every server of a new cluster may call it with the identical
// configuration; Raft makes that idempotent. A server that already has
// state returns ErrAlreadyBootstrapped.
func (s *Server) Bootstrap(servers []Peer) error {
	cfg := raft.Configuration{}
	for _, p := range servers {
		cfg.Servers = append(cfg.Servers, raft.Server{
			Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Address),
		})
	}
	return translate(s.raft.BootstrapCluster(cfg).Error())
}

// Peer is one server in the Raft configuration.
type Peer struct {
	ID      string
	Address string
	Voter   bool
}

// Configuration returns the committed Raft configuration and the log index
// it was written at.
func (s *Server) Configuration() ([]Peer, uint64, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, 0, translate(err)
	}
	var out []Peer
	for _, srv := range f.Configuration().Servers {
		out = append(out, Peer{ID: string(srv.ID), Address: string(srv.Address), Voter: srv.Suffrage == raft.Voter})
	}
	return out, f.Index(), nil
}

// AddVoter adds a server to the configuration as a voter, promotes a
// non-voter, or updates the address of a voter already in it. Leader
// only. A different server already holding the address (a replaced
// machine with a fresh data directory) is removed first, as the
// configuration cannot hold one address twice.
//
// A new server should join as a non-voter (AddNonvoter) and be promoted
// once it has caught up: a voter that cannot be reached counts against
// the quorum from the moment it is added.
func (s *Server) AddVoter(id, addr string) error {
	done, err := s.freeAddress(id, addr, true)
	if err != nil || done {
		return err
	}
	return translate(s.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 10*time.Second).Error())
}

// AddNonvoter adds a server to the configuration as a non-voter: it
// receives the log but has no vote, so it cannot cost the cluster its
// quorum however slow or unreachable it is. A server already in the
// configuration at that address, voter or not, is left as it is; one
// there at another address has its address updated (keeping its
// suffrage). Leader only. As AddVoter, a different server holding the
// address is removed first, unless it is the leader.
func (s *Server) AddNonvoter(id, addr string) error {
	done, err := s.freeAddress(id, addr, false)
	if err != nil || done {
		return err
	}
	return translate(s.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 10*time.Second).Error())
}

// ErrAddressTaken: a server asked to join at the leader's own Raft
// address.
var ErrAddressTaken = errors.New("the address is the leader's")

// freeAddress prepares adding id at addr: done when the server is already
// in the configuration as asked (a voter when voter is set, in it at all
// otherwise); a different server at addr is removed first.
func (s *Server) freeAddress(id, addr string, voter bool) (done bool, err error) {
	peers, _, err := s.Configuration()
	if err != nil {
		return false, err
	}
	_, leaderID := s.Leader()
	for _, p := range peers {
		if p.ID == id && p.Address == addr && (p.Voter || !voter) {
			return true, nil
		}
		if p.ID != id && p.Address == addr {
			if p.ID == leaderID || p.ID == s.id {
				return false, fmt.Errorf("adding server %s at %s: %w", id, addr, ErrAddressTaken)
			}
			s.logger.Info("removing server replaced at its address", "old_id", p.ID, "new_id", id, "address", addr)
			if err := s.RemoveServer(p.ID); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// RemoveServer removes a server from the configuration. Leader only.
func (s *Server) RemoveServer(id string) error {
	return translate(s.raft.RemoveServer(raft.ServerID(id), 0, 10*time.Second).Error())
}

// ErrNoTransferTarget: a leadership transfer found no other voter to hand
// the leadership to (a one-server cluster).
var ErrNoTransferTarget = errors.New("no other voter to hand the leadership to")

// TransferLeadership hands this server's leadership to the most up-to-date
// other voter (hashicorp/raft's LeadershipTransfer: the target is brought
// up to date with the log, then told to start an election at once, which
// it wins) and waits until the transfer ends, at most timeout. It returns
// the new leader's ID. Leader only; while it runs, this server takes no
// new entries (ErrLeadershipLost). Before a leader stops, it moves the
// leadership in tens of milliseconds instead of leaving the others to
// notice its silence and elect one (about a second).
func (s *Server) TransferLeadership(timeout time.Duration) (string, error) {
	if !s.IsLeader() {
		return "", ErrNotLeader
	}
	peers, _, err := s.Configuration()
	if err != nil {
		return "", err
	}
	others := 0
	for _, p := range peers {
		if p.Voter && p.ID != s.id {
			others++
		}
	}
	if others == 0 {
		return "", ErrNoTransferTarget
	}
	done := make(chan error, 1)
	go func() { done <- s.raft.LeadershipTransfer().Error() }()
	select {
	case err := <-done:
		if err != nil {
			return "", translate(err)
		}
	case <-time.After(timeout):
		return "", fmt.Errorf("%w: leadership transfer not done within %s", ErrTimeout, timeout)
	}
	// The new leader is known once it has sent its first heartbeat.
	deadline := time.Now().Add(timeout)
	for {
		if _, id := s.Leader(); id != "" && id != s.id {
			return id, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%w: no new leader heard of within %s of the transfer", ErrTimeout, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// IsLeader reports whether this server is the leader now.
func (s *Server) IsLeader() bool { return s.raft.State() == raft.Leader }

// Leader returns the current leader's Raft address and ID, both empty when
// no leader is known.
func (s *Server) Leader() (addr, id string) {
	a, i := s.raft.LeaderWithID()
	return string(a), string(i)
}

// LastContact returns the time since this server last heard from the
// leader; zero on the leader itself.
func (s *Server) LastContact() time.Duration {
	if s.IsLeader() {
		return 0
	}
	t := s.raft.LastContact()
	if t.IsZero() {
		return 0
	}
	return time.Since(t)
}

// State returns Raft's state name: "Follower", "Candidate", "Leader" or
// "Shutdown".
func (s *Server) State() string { return s.raft.State().String() }

// Stats returns Raft's internal statistics, for the agent self endpoint.
func (s *Server) Stats() map[string]string { return s.raft.Stats() }

// translate maps raft's errors onto the package's sentinels, keeping
// raft's error in the chain.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader):
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %w", ErrLeadershipLost, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("%w: %w", ErrShutdown, err)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	case errors.Is(err, raft.ErrCantBootstrap):
		return fmt.Errorf("%w: %w", ErrAlreadyBootstrapped, err)
	}
	return err
}
