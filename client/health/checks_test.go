package health

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

func TestHTTPAndTCPCheckers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" && r.Header.Get("X-Probe") == "1" {
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	good := HTTPChecker{URL: srv.URL + "/ok", Header: http.Header{"X-Probe": {"1"}}}
	if err := good.Check(ctx); err != nil {
		t.Fatalf("good HTTP check: %v", err)
	}
	if err := (HTTPChecker{URL: srv.URL + "/bad"}).Check(ctx); !errors.Is(err, ErrCheckFailed) {
		t.Fatalf("503 passed: %v", err)
	}
	if err := (TCPChecker{Addr: srv.Listener.Addr().String()}).Check(ctx); err != nil {
		t.Fatalf("TCP to a listener: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	if err := (TCPChecker{Addr: closed}).Check(ctx); !errors.Is(err, ErrCheckFailed) {
		t.Fatalf("TCP to a closed port passed: %v", err)
	}
}

func TestAllocChecks(t *testing.T) {
	alloc := &structs.Allocation{AllocatedResources: &structs.AllocatedResources{
		Shared: structs.AllocatedSharedResources{Ports: []structs.PortMapping{{Label: "http", Value: 23000}, {Label: "admin", Value: 23001}}},
	}}
	tg := &structs.TaskGroup{
		Services: []*structs.Service{{Name: "api", PortLabel: "http", Checks: []*structs.ServiceCheck{
			{Name: "alive", Type: "http", Path: "health/${NOMAD_ALLOC_ID}"},
			{Name: "admin", Type: "tcp", PortLabel: "admin"},
		}}},
	}
	checks, err := AllocChecks(alloc, tg, func(s string) string { return strings.ReplaceAll(s, "${NOMAD_ALLOC_ID}", "a1") }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 2 || checks[0].Name != "api/alive" ||
		checks[0].Checker.(HTTPChecker).URL != "http://127.0.0.1:23000/health/a1" ||
		checks[1].Checker.(TCPChecker).Addr != "127.0.0.1:23001" {
		t.Fatalf("checks %+v", checks)
	}
	tg.Services[0].Checks[1].PortLabel = "nope"
	if _, err := AllocChecks(alloc, tg, nil, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("unknown port label: %v", err)
	}
}

type scripted struct {
	mu      sync.Mutex
	results []error
}

func (s *scripted) Check(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.results) == 0 {
		return nil
	}
	r := s.results[0]
	s.results = s.results[1:]
	return r
}

func TestRunChecksAtInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(t0)
		var mu sync.Mutex
		var got []bool
		ctx, cancel := context.WithCancel(context.Background())
		wait := RunChecks(ctx, c, []Check{{
			Name: "x", Interval: 5 * time.Second,
			Checker: &scripted{results: []error{nil, ErrCheckFailed, nil}},
		}}, func(r CheckResult) {
			mu.Lock()
			got = append(got, r.Passing())
			mu.Unlock()
		})
		for range 3 {
			synctest.Wait()
			c.Advance(5 * time.Second)
		}
		synctest.Wait()
		cancel()
		wait()
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 3 || !got[0] || got[1] || !got[2] {
			t.Fatalf("results %v, want [true false true]", got)
		}
	})
}

// TestChecksFeedTracker runs a real HTTP check against a server on
// 127.0.0.1 into a tracker on the real clock, bounded in time.
func TestChecksFeedTracker(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	alloc := &structs.Allocation{AllocatedResources: &structs.AllocatedResources{
		Shared: structs.AllocatedSharedResources{Ports: []structs.PortMapping{{Label: "http", Value: p}}},
	}}
	tg := &structs.TaskGroup{Services: []*structs.Service{{Name: "api", PortLabel: "http",
		Checks: []*structs.ServiceCheck{{Name: "alive", Type: "http", Path: "/", Interval: 20 * time.Millisecond}}}}}
	checks, err := AllocChecks(alloc, tg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	s := structs.DefaultUpdateStrategy()
	s.MinHealthyTime = 50 * time.Millisecond
	tr, err := NewTracker(Config{Strategy: s, Tasks: []string{"web"}, Checks: []string{"api/alive"},
		OnResult: func(r Result) { done <- r }})
	if err != nil {
		t.Fatal(err)
	}
	tr.Start()
	tr.TaskUpdated("web", &structs.TaskState{State: structs.TaskStateRunning, StartedAt: time.Now()})
	ctx, cancel := context.WithCancel(context.Background())
	wait := RunChecks(ctx, clock.Real{}, checks, tr.CheckResult)
	defer func() { cancel(); wait() }()
	select {
	case r := <-done:
		if !r.Healthy {
			t.Fatalf("result %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no health decision")
	}
}
