package sim

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/agent"
)

// ModeInProcess runs one server inside the simulator's own process (tests
// and CPU profiles of server and clients together); its memory is the
// simulator's.
const ModeInProcess = "inprocess"

// inProcess is a server agent in this process.
type inProcess struct {
	a   *agent.Agent
	dir string
}

// startInProcess starts a single self-bootstrapping server (no client of
// its own) on loopback ports.
func startInProcess(dir string, logger hclog.Logger) (*inProcess, error) {
	raftAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p := &inProcess{}
	if dir == "" {
		if p.dir, err = os.MkdirTemp("", "drover-sim-server-"); err != nil {
			return nil, err
		}
		dir = p.dir
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	a, err := agent.New(agent.Config{
		Server: true, BootstrapExpect: 1, DataDir: dir, HTTPAddr: "127.0.0.1:0", RaftAddr: raftAddr,
		NodeName: "server-1", NoSync: true, Logger: logger,
	})
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("in-process server: %w", err)
	}
	a.Start()
	p.a = a
	return p, nil
}

func (p *inProcess) addr() string { return p.a.HTTPAddr() }

// waitLeader waits until the server leads.
func (p *inProcess) waitLeader(ctx context.Context) error {
	return poll(ctx, "in-process server leadership", func() (bool, error) { return p.a.IsLeader(), nil })
}

func (p *inProcess) stop() {
	if p.a != nil {
		_ = p.a.Shutdown()
	}
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
}
