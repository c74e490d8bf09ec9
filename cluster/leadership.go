package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics/compat"
	"github.com/hashicorp/raft"
)

// LeaderService is a loop that runs on the leader only. It is started, in
// its own goroutine, once this server has won an election and a Barrier has
// applied every earlier entry to the local state (so the service sees all
// committed state); ctx is cancelled when leadership is lost or the server
// shuts down, and the service must then return promptly. The next
// leadership term starts it again with a fresh context.
type LeaderService func(ctx context.Context)

// OnLeadership registers a leader service under a name (for logs). A
// service registered while this server is already an established leader is
// started at once.
func (s *Server) OnLeadership(name string, svc LeaderService) {
	s.leadership.register(name, svc)
}

// LeaderReady reports whether this server is the leader and its leader
// services have been started (the post-election Barrier has completed).
func (s *Server) LeaderReady() bool { return s.leadership.ready() }

// leadership turns Raft's leadership notifications into runs of the
// registered leader services.
type leadership struct {
	raft   *raft.Raft
	logger hclog.Logger

	mu       sync.Mutex
	services []namedService
	termCtx  context.Context // non-nil while leader services run
	termWG   *sync.WaitGroup
	isReady  bool

	done chan struct{}
	wg   sync.WaitGroup
}

type namedService struct {
	name string
	fn   LeaderService
}

func newLeadership(r *raft.Raft, notify <-chan bool, logger hclog.Logger) *leadership {
	l := &leadership{raft: r, logger: logger, done: make(chan struct{})}
	l.wg.Add(1)
	go l.monitor(notify)
	return l
}

func (l *leadership) register(name string, fn LeaderService) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.services = append(l.services, namedService{name, fn})
	if l.termCtx != nil {
		l.start(l.termCtx, l.termWG, namedService{name, fn})
	}
}

func (l *leadership) ready() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.isReady
}

// monitor consumes Raft's notifications in order. Raft blocks on a full
// notify channel, so this loop never waits on anything but its own term.
func (l *leadership) monitor(notify <-chan bool) {
	defer l.wg.Done()
	var endTerm func() // non-nil while a leadership term runs
	stop := func() {
		if endTerm != nil {
			endTerm()
			endTerm = nil
			l.logger.Info("leader services stopped")
		}
	}
	for {
		select {
		case isLeader := <-notify:
			if !isLeader {
				stop()
			} else if endTerm == nil {
				endTerm = l.beginTerm()
			}
		case <-l.done:
			stop()
			return
		}
	}
}

// beginTerm starts runTerm and returns a function that ends the term and
// waits for it.
func (l *leadership) beginTerm() func() {
	ctx, cancel := context.WithCancel(context.Background())
	var term sync.WaitGroup
	term.Add(1)
	go func() {
		defer term.Done()
		l.runTerm(ctx)
	}()
	return func() {
		cancel()
		term.Wait()
	}
}

// runTerm waits for a Barrier, starts every service and waits for the term
// to end and every service to return.
func (l *leadership) runTerm(ctx context.Context) {
	barrier := time.Now()
	for {
		err := l.raft.Barrier(time.Minute).Error()
		if err == nil {
			metrics.MeasureSince([]string{"nomad", "leader", "barrier"}, barrier)
			break
		}
		l.logger.Warn("barrier after election failed; retrying", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	var services sync.WaitGroup
	l.mu.Lock()
	if ctx.Err() != nil {
		l.mu.Unlock()
		return
	}
	l.termCtx, l.termWG, l.isReady = ctx, &services, true
	for _, svc := range l.services {
		l.start(ctx, &services, svc)
	}
	n := len(l.services)
	l.mu.Unlock()
	l.logger.Info("leadership established; leader services started", "services", n)

	<-ctx.Done()
	l.mu.Lock()
	l.termCtx, l.termWG, l.isReady = nil, nil, false
	l.mu.Unlock()
	services.Wait()
}

// start runs one service; l.mu is held.
func (l *leadership) start(ctx context.Context, wg *sync.WaitGroup, svc namedService) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		svc.fn(ctx)
	}()
}

func (l *leadership) stop() {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	l.wg.Wait()
}
