// Package agent assembles a drover server: the replicated state machine,
// the Raft server, the HTTP API and the discovery of the other servers.
package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/structs"
)

// ErrConfig: the configuration cannot run.
var ErrConfig = errors.New("invalid agent configuration")

// Agent is one running server.
type Agent struct {
	cfg     Config
	logger  hclog.Logger
	fsm     *fsm.FSM
	raft    *cluster.Server
	leader  *server.Leader
	members *members
	api     *httpapi.Server

	listener net.Listener
	http     *http.Server
	devDir   string // removed on shutdown

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// New checks cfg, opens the Raft state and binds the HTTP listener. Start
// serves.
func New(cfg Config) (*Agent, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Region == "" {
		cfg.Region = structs.DefaultRegion
	}
	if cfg.Datacenter == "" {
		cfg.Datacenter = structs.DefaultDatacenter
	}
	if cfg.NodeName == "" {
		cfg.NodeName, _ = os.Hostname()
	}
	a := &Agent{cfg: cfg, logger: cfg.Logger}
	if cfg.Dev {
		dir, err := os.MkdirTemp("", "drover-dev-")
		if err != nil {
			return nil, fmt.Errorf("dev data directory: %w", err)
		}
		a.devDir, a.cfg.DataDir, a.cfg.Server = dir, dir, true
		a.cfg.BootstrapExpect = 1
		// The state is thrown away on exit: no point syncing it to disk.
		a.cfg.NoSync = true
	}
	if err := a.check(); err != nil {
		a.removeDevDir()
		return nil, err
	}
	if err := a.open(); err != nil {
		a.removeDevDir()
		return nil, err
	}
	return a, nil
}

func (a *Agent) check() error {
	switch {
	case !a.cfg.Server:
		return fmt.Errorf("%w: only server agents exist so far; pass -server or -dev", ErrConfig)
	case a.cfg.DataDir == "":
		return fmt.Errorf("%w: -data-dir is required for a server (or use -dev)", ErrConfig)
	case a.cfg.BootstrapExpect < 0:
		return fmt.Errorf("%w: -bootstrap-expect must not be negative", ErrConfig)
	case a.cfg.HTTPAddr == "" || a.cfg.RaftAddr == "":
		return fmt.Errorf("%w: HTTP and Raft addresses are required", ErrConfig)
	}
	return nil
}

func (a *Agent) open() error {
	ln, err := net.Listen("tcp", a.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("HTTP listener: %w", err)
	}
	a.fsm = fsm.New(a.logger.Named("fsm"))
	srv, err := cluster.New(cluster.Config{
		DataDir: a.cfg.DataDir, RaftAddr: a.cfg.RaftAddr, FSM: a.fsm, Logger: a.logger, NoSync: a.cfg.NoSync,
	})
	if err != nil {
		ln.Close()
		return err
	}
	leader, err := server.New(server.Config{Raft: srv, State: a.fsm.State, Logger: a.logger.Named("leader")})
	if err != nil {
		_ = srv.Shutdown()
		ln.Close()
		return err
	}
	srv.OnLeadership("scheduler", leader.Run)
	a.raft, a.leader, a.listener = srv, leader, ln
	a.members = newMembers(a.self())
	a.api = httpapi.New(a, a.logger)
	a.http = &http.Server{Handler: a.api.Handler(), ReadHeaderTimeout: 10 * time.Second}
	return nil
}

// self is this server's member record.
func (a *Agent) self() structs.ServerMember {
	return structs.ServerMember{
		ID: a.raft.ID(), Name: a.cfg.NodeName, RaftAddr: a.raft.Addr(), HTTPAddr: a.listener.Addr().String(),
		Region: a.cfg.Region, Datacenter: a.cfg.Datacenter, Version: a.cfg.Version,
	}
}

// HTTPAddr is the address the API listens on.
func (a *Agent) HTTPAddr() string { return a.listener.Addr().String() }

// Cluster returns the Raft server, for registering leader services.
func (a *Agent) Cluster() *cluster.Server { return a.raft }

// Start serves the API and starts finding the other servers (bootstrapping
// once enough are known).
func (a *Agent) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.wg.Add(2)
	go func() {
		defer a.wg.Done()
		if err := a.http.Serve(a.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("HTTP server stopped", "error", err)
		}
	}()
	go func() {
		defer a.wg.Done()
		a.discover(ctx)
	}()
	a.logger.Info("server started", "id", a.raft.ID(), "http", a.HTTPAddr(), "raft", a.raft.Addr(),
		"data_dir", a.cfg.DataDir, "bootstrap_expect", a.cfg.BootstrapExpect)
}

// Shutdown stops the API, discovery and Raft, and removes a dev data
// directory. It is safe to call more than once.
func (a *Agent) Shutdown() error {
	var err error
	a.once.Do(func() {
		if a.cancel != nil {
			a.cancel()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if e := a.http.Shutdown(ctx); e != nil {
			a.http.Close()
		}
		a.listener.Close()
		a.wg.Wait()
		err = a.raft.Shutdown()
		a.removeDevDir()
	})
	return err
}

func (a *Agent) removeDevDir() {
	if a.devDir != "" {
		if err := os.RemoveAll(a.devDir); err != nil {
			a.logger.Warn("removing dev data directory", "dir", a.devDir, "error", err)
		}
	}
}
