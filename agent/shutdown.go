package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/droverhq/drover/config"
)

// ErrShutdownTimeout: a part of the agent had not stopped when the
// shutdown timeout passed; the agent stopped without it.
var ErrShutdownTimeout = errors.New("shutdown timeout passed")

// Shutdown stops the agent and removes a dev data directory. A dev
// agent's client first kills its allocations' tasks and reports their end
// to the server; any other client leaves them running, for the restarted
// client to re-attach to. Then the API, discovery and Raft stop. It is
// safe to call more than once.
//
// It returns within the shutdown timeout (Config.ShutdownTimeout,
// shutdown_timeout: 30s by default), whatever the agent's parts wait on:
// a part that has not stopped by then is named in an error log line and
// left behind, the parts after it get one more second between them, and
// the error wraps ErrShutdownTimeout. The process may then exit.
func (a *Agent) Shutdown() error {
	var err error
	a.once.Do(func() { err = a.shutdown() })
	return err
}

func (a *Agent) shutdown() error {
	timeout := a.cfg.ShutdownTimeout
	if timeout <= 0 {
		timeout = config.DefaultShutdownTimeout
	}
	s := &shutdownSteps{a: a, timeout: timeout, deadline: time.Now().Add(timeout)}
	if a.client != nil {
		s.step("client", func() { a.client.Shutdown(a.cfg.Dev) }, func() []any {
			return []any{"allocations", a.client.Unstopped()}
		})
	}
	if a.raft != nil && a.api != nil {
		s.step("leadership handover", func() { a.handOver(min(10*time.Second, s.left())) }, nil)
	}
	if a.cancel != nil {
		a.cancel()
	}
	s.step("http server", func() {
		if a.api != nil {
			a.api.CloseStreams() // open event streams would hold the shutdown
		}
		ctx, cancel := context.WithTimeout(context.Background(), min(5*time.Second, s.left()))
		defer cancel()
		if e := a.http.Shutdown(ctx); e != nil {
			a.http.Close()
		}
		a.listener.Close()
		a.closeSerf()
	}, nil)
	s.step("agent loops (discovery, metrics, client)", a.wg.Wait, nil)
	var err error
	if a.raft != nil {
		s.step("raft", func() { err = a.raft.Shutdown() }, nil)
	}
	s.step("dev data directory removal", a.removeDevDir, nil)
	if len(s.late) > 0 {
		return errors.Join(err, fmt.Errorf("%w: %s not stopped after %s", ErrShutdownTimeout, strings.Join(s.late, ", "), timeout))
	}
	return err
}

// shutdownSteps runs the steps of a shutdown within one deadline.
type shutdownSteps struct {
	a        *Agent
	timeout  time.Duration
	deadline time.Time
	late     []string // the steps that had not ended by the deadline
}

func (s *shutdownSteps) left() time.Duration { return max(time.Until(s.deadline), 0) }

// step runs f and waits for it until the deadline; past it, it logs name
// (and what more says) and goes on, f still running. The first step late
// moves the deadline a second on, for the steps after it.
func (s *shutdownSteps) step(name string, f func(), more func() []any) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t := time.NewTimer(s.left())
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	select {
	case <-done:
		return
	default:
	}
	args := []any{"component", name, "shutdown_timeout", s.timeout}
	if more != nil {
		args = append(args, more()...)
	}
	s.a.logger.Error("shutdown: not stopped within the shutdown timeout; exiting without it", args...)
	if len(s.late) == 0 {
		s.deadline = time.Now().Add(time.Second)
	}
	s.late = append(s.late, name)
}

// handOver, on a server that leads, moves its leadership to the most
// up-to-date other voter before the server stops serving: its API stops
// serving as the leader and lets the writes it is serving finish
// (httpapi's Leave), then Raft hands the leadership over; requests that
// arrive meanwhile are held and sent on to the new leader, and the HTTP
// server drains after. Without this the stopping leader kept its
// leadership while its HTTP server drained (up to 5 s), and the others
// elected a leader only once its Raft stopped. A follower only stops
// keeping its connections alive. At most timeout.
func (a *Agent) handOver(timeout time.Duration) {
	a.stopServingKeepAlives()
	if !a.raft.IsLeader() || !a.otherVoters() {
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := a.api.Leave(ctx); err != nil {
		a.logger.Warn("shutdown: handing the leadership over with writes still being served", "error", err)
	}
	id, err := a.raft.TransferLeadership(max(time.Until(start.Add(timeout)), 0))
	if err != nil {
		// Serve as the leader until the HTTP server stops, as before.
		a.api.Stay()
		a.logger.Warn("shutdown: the leadership could not be handed over; the others elect a leader once this server stops", "error", err)
		return
	}
	a.logger.Info("shutdown: leadership handed over", "new_leader", id, "took", time.Since(start).Round(time.Millisecond))
}

// otherVoters reports whether the Raft configuration has a voter besides
// this server.
func (a *Agent) otherVoters() bool {
	peers, _, err := a.raft.Configuration()
	if err != nil {
		return false
	}
	for _, p := range peers {
		if p.Voter && p.ID != a.raft.ID() {
			return true
		}
	}
	return false
}
