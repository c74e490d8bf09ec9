package cluster

import (
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Config describes one server of the replicated log.
type Config struct {
	// DataDir holds server-id and raft/. Required unless InMemory is set.
	DataDir string

	// ID is the server's Raft ID. Empty: read from DataDir/server-id,
	// minting a UUID there on first start.
	ID string

	// RaftAddr is the TCP address the Raft transport binds to and
	// advertises (host:port). Ignored when Transport is set.
	RaftAddr string

	// TLS, when set, runs the Raft transport over mutual TLS (tls.rpc).
	// Ignored when Transport is set.
	TLS *TLS

	// FSM is the replicated state machine. Required.
	FSM raft.FSM

	// Logger receives Raft's and this package's logs. Nil discards them.
	Logger hclog.Logger

	// Transport, when set, replaces the TCP transport (tests use raft's
	// in-memory transport).
	Transport raft.Transport

	// InMemory keeps the log, stable store and snapshots in memory
	// (tests only: nothing survives a restart).
	InMemory bool
	// wrapLogs, in tests, wraps the log store (to make it fail).
	wrapLogs func(raft.LogStore) raft.LogStore

	// NoSync skips bbolt's fsync after each batch of log entries. Entries
	// still reach the operating system before a write is acknowledged, so
	// they survive the process being killed, but not a machine crash or
	// power loss. Off by default.
	NoSync bool

	// RecoveryFSM returns a fresh, empty state machine for a recovery from
	// raft/peers.json (see PeersJSONFile), which replays the log into a
	// state machine that is then thrown away. Nil uses FSM, which is then
	// restored again from the recovery's snapshot.
	RecoveryFSM func() raft.FSM

	// Raft overrides the tuned Raft configuration (LANRaftConfig) when set.
	// LocalID is always set from ID.
	Raft *raft.Config
}

// Timing for a LAN (one data centre, sub-millisecond round trips), chosen
// against hashicorp/raft's defaults, which are sized for WANs:
//
//   - HeartbeatTimeout 500ms (default 1s): a follower starts an election
//     after between one and two heartbeat timeouts without contact, so a
//     dead leader is noticed after 0.5–1s instead of 1–2s. Heartbeats go out
//     every HeartbeatTimeout/10 = 50ms, far above LAN jitter, and Go GC
//     pauses are a few milliseconds, so spurious elections stay rare even on
//     a busy two-core machine.
//   - ElectionTimeout 500ms (default 1s): a candidate that did not win
//     retries after 0.5–1s, which matters only on split votes.
//   - LeaderLeaseTimeout 250ms (default 500ms): a leader cut off from its
//     quorum steps down within 250ms, so a partitioned old leader stops
//     accepting writes before a new one is elected.
//   - MaxAppendEntries 64 (the default) with BatchApplyCh: concurrent writes
//     are appended, fsynced and replicated in batches, one disk sync per
//     batch instead of one per write. 512 gave no more throughput at 64
//     writers (BenchmarkApply, three servers with fsync: 6,100–7,300
//     writes/s at 512, 7,700–10,350 at 64), and with plan entries of half a megabyte it let one
//     AppendEntries RPC carry hundreds of megabytes to a follower catching
//     up, which stalled that follower past its heartbeat timeout.
//
// Together these bring failover (old leader killed → new leader accepting
// writes) from about 2.2s with the defaults to about 1s.
const (
	HeartbeatTimeout   = 500 * time.Millisecond
	ElectionTimeout    = 500 * time.Millisecond
	LeaderLeaseTimeout = 250 * time.Millisecond
	MaxAppendEntries   = 64
)

// LANRaftConfig returns hashicorp/raft's configuration tuned for a LAN; see
// the constants above for the values and why.
func LANRaftConfig() *raft.Config {
	c := raft.DefaultConfig()
	c.HeartbeatTimeout = HeartbeatTimeout
	c.ElectionTimeout = ElectionTimeout
	c.LeaderLeaseTimeout = LeaderLeaseTimeout
	c.MaxAppendEntries = MaxAppendEntries
	c.BatchApplyCh = true
	c.SnapshotThreshold = 8192
	c.TrailingLogs = 10240
	return c
}

// snapshotsRetained is how many file snapshots are kept on disk.
const snapshotsRetained = 2
