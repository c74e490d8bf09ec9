package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
)

// Server modes of a Servers.
const (
	ModeDev      = "dev"      // one `drover agent -dev` process
	ModeCluster3 = "cluster3" // three `drover agent -server` processes
)

// ErrNoLeader: the servers have no leader (yet).
var ErrNoLeader = errors.New("no leader")

// ServersConfig says which servers to start.
type ServersConfig struct {
	// Mode is ModeDev or ModeCluster3.
	Mode string
	// Binary is the drover executable.
	Binary string
	// Dir holds the servers' data and logs (<name>.log); a temporary
	// directory, removed by Stop, when empty. It must not hold an earlier
	// run's servers: their stored peers have addresses this run does not
	// use, and they would never elect a leader.
	Dir string
	// NoSync passes -raft-no-sync to cluster servers (dev mode never
	// syncs).
	NoSync bool
}

// ServerProc is one server process.
type ServerProc struct {
	Name     string
	HTTPAddr string
	RaftAddr string
	LogPath  string

	cmd  *exec.Cmd
	done chan struct{}
}

// PID returns the process ID.
func (s *ServerProc) PID() int { return s.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (s *ServerProc) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Kill sends SIGKILL and waits (at most 10s) for the process to end.
func (s *ServerProc) Kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
	}
}

// Servers are server processes on loopback started for a scenario.
type Servers struct {
	cfg     ServersConfig
	tempDir string
	procs   []*ServerProc

	mu         sync.Mutex
	lastLeader *ServerProc
}

// StartServers starts the servers and waits (bounded by ctx) until they
// have a leader.
func StartServers(ctx context.Context, cfg ServersConfig) (*Servers, error) {
	if cfg.Binary == "" {
		return nil, fmt.Errorf("%w: no drover binary", ErrInvalidConfig)
	}
	s := &Servers{cfg: cfg}
	if s.cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "drover-sim-servers-")
		if err != nil {
			return nil, err
		}
		s.tempDir, s.cfg.Dir = dir, dir
	} else if err := os.MkdirAll(s.cfg.Dir, 0o755); err != nil {
		return nil, err
	} else if err := noEarlierServers(s.cfg.Dir); err != nil {
		return nil, err
	}
	var n int
	switch cfg.Mode {
	case ModeDev:
		n = 1
	case ModeCluster3:
		n = 3
	default:
		return nil, fmt.Errorf("%w: server mode %q (want %s or %s)", ErrInvalidConfig, cfg.Mode, ModeDev, ModeCluster3)
	}
	for i := range n {
		httpAddr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		raftAddr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("server-%d", i+1)
		s.procs = append(s.procs, &ServerProc{Name: name, HTTPAddr: httpAddr, RaftAddr: raftAddr,
			LogPath: filepath.Join(s.cfg.Dir, name+".log")})
	}
	for _, p := range s.procs {
		if err := s.start(p, false); err != nil {
			s.Stop()
			return nil, err
		}
	}
	if err := s.WaitLeader(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Restart starts an exited server again on its addresses and data
// directory (it rejoins as a follower and catches up), appending to its
// log.
func (s *Servers) Restart(p *ServerProc) error {
	if !p.Exited() {
		return fmt.Errorf("%s still runs", p.Name)
	}
	return s.start(p, true)
}

// noEarlierServers refuses a directory that holds the data of an earlier
// run's servers.
func noEarlierServers(dir string) error {
	old, err := filepath.Glob(filepath.Join(dir, "server-*", "raft"))
	if err != nil || len(old) == 0 {
		return err
	}
	return fmt.Errorf("%w: -dir %s holds the servers of an earlier run (%s): remove it or choose another",
		ErrInvalidConfig, dir, filepath.Dir(old[0]))
}

// start runs one server process; again appends to its log.
func (s *Servers) start(p *ServerProc, again bool) error {
	args := []string{"agent", "-http-addr", p.HTTPAddr, "-raft-addr", p.RaftAddr, "-node", p.Name, "-log-level", "warn"}
	if s.cfg.Mode == ModeDev {
		args = append(args, "-dev")
	} else {
		// -enable-debug: the bench's servers can be profiled as a dev
		// agent can (/debug/pprof/).
		args = append(args, "-server", "-enable-debug", "-bootstrap-expect", "3", "-data-dir", filepath.Join(s.cfg.Dir, p.Name))
		for _, o := range s.procs {
			if o != p {
				args = append(args, "-retry-join", o.HTTPAddr)
			}
		}
		if s.cfg.NoSync {
			args = append(args, "-raft-no-sync")
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if again {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	logf, err := os.OpenFile(p.LogPath, flags, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.cfg.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR=")
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("starting %s: %w", p.Name, err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return nil
}

// freeAddr returns a loopback address with a port free right now that
// this process has not handed out before: the kernel may give a port just
// closed to the next caller, and two servers given the same one do not
// start (a cluster3 run once failed so, its first server's Raft port being
// its second's).
func freeAddr() (string, error) { return loopback.Free() }

// Procs returns the server processes.
func (s *Servers) Procs() []*ServerProc { return s.procs }

// HTTPAddrs returns the HTTP addresses of the servers still running.
func (s *Servers) HTTPAddrs() []string {
	var out []string
	for _, p := range s.procs {
		if !p.Exited() {
			out = append(out, p.HTTPAddr)
		}
	}
	return out
}

// Leader asks the running servers who leads and returns that process.
func (s *Servers) Leader(ctx context.Context) (*ServerProc, error) {
	var errs []error
	for _, p := range s.procs {
		if p.Exited() {
			continue
		}
		c, err := apiclient.New(p.HTTPAddr)
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		addr, err := c.Status().Leader(cctx)
		cancel()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, l := range s.procs {
			if addr != "" && l.RaftAddr == strings.TrimSpace(addr) && !l.Exited() {
				s.mu.Lock()
				s.lastLeader = l
				s.mu.Unlock()
				return l, nil
			}
		}
	}
	return nil, errors.Join(append([]error{ErrNoLeader}, errs...)...)
}

// LastLeader returns the leader Leader last found, if that process still
// runs: for when the servers are too busy to answer who leads.
func (s *Servers) LastLeader() *ServerProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastLeader == nil || s.lastLeader.Exited() {
		return nil
	}
	return s.lastLeader
}

// WaitLeader waits until the servers agree on a running leader and it
// answers writes' reads (bounded by ctx).
func (s *Servers) WaitLeader(ctx context.Context) error {
	for {
		l, err := s.Leader(ctx)
		if err == nil && l != nil {
			return nil
		}
		for _, p := range s.procs {
			if p.Exited() && s.cfg.Mode == ModeDev {
				return fmt.Errorf("%s exited; see %s", p.Name, p.LogPath)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w (logs in %s)", err, ctx.Err(), s.cfg.Dir)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Stop kills every server and removes a temporary directory.
func (s *Servers) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		if p.cmd != nil {
			p.Kill()
		}
	}
	if s.tempDir != "" {
		_ = os.RemoveAll(s.tempDir)
	}
}
