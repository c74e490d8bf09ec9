package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// PeersJSONFile is the recovery file, under the data directory: when a
// server starts and finds it, it replaces the Raft configuration with the
// servers it names, keeping the log, the snapshots and so the data, and
// deletes the file. It is the way back when a cluster has lost its quorum
// for good (two servers of three destroyed): stop the survivors, write the
// same file on each, start them again. The format is Nomad's (and
// hashicorp/raft's ReadConfigJSON):
//
//	[
//	  {"id": "5a0b...", "address": "10.0.0.1:4647", "non_voter": false}
//	]
const PeersJSONFile = "raft/peers.json"

// ErrRecovery: raft/peers.json is present but the recovery failed; the
// server does not start, and the file is left in place.
var ErrRecovery = errors.New("recovering the Raft configuration from peers.json")

// recoverFromPeersJSON runs raft.RecoverCluster with the configuration of
// DataDir/raft/peers.json when the file exists, then removes the file.
func (s *Server) recoverFromPeersJSON(cfg Config, rc *raft.Config, logs raft.LogStore, stable raft.StableStore,
	snaps raft.SnapshotStore, trans raft.Transport) error {
	path := filepath.Join(cfg.DataDir, PeersJSONFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	conf, err := raft.ReadConfigJSON(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRecovery, path, err)
	}
	self := false
	for _, srv := range conf.Servers {
		self = self || (srv.ID == raft.ServerID(s.id) && srv.Suffrage == raft.Voter)
	}
	if !self {
		s.logger.Warn("peers.json does not name this server as a voter; it will not lead the recovered cluster", "id", s.id)
	}
	fsm := cfg.FSM
	if cfg.RecoveryFSM != nil {
		fsm = cfg.RecoveryFSM()
	}
	rcc := *rc
	if err := raft.RecoverCluster(&rcc, fsm, logs, stable, snaps, trans, conf); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRecovery, path, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("%w: removing %s after the recovery: %w", ErrRecovery, path, err)
	}
	servers := make([]string, 0, len(conf.Servers))
	for _, srv := range conf.Servers {
		servers = append(servers, fmt.Sprintf("%s@%s(%s)", srv.ID, srv.Address, srv.Suffrage))
	}
	s.logger.Info("recovered the Raft configuration from peers.json", "servers", servers)
	return nil
}
