package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startAgent runs one server agent in-process on loopback, with
// autopilot's stabilization time at 1s.
func startAgent(t *testing.T, name string, expect int, join ...string) *Agent {
	t.Helper()
	return startAgentWith(t, testConfig(t, name, expect, join...))
}

// testConfig is startAgent's configuration, to adjust before
// startAgentWith.
func testConfig(t *testing.T, name string, expect int, join ...string) Config {
	ap := structs.DefaultAutopilotConfig()
	ap.ServerStabilizationTime = time.Second
	return Config{
		Server: true, BootstrapExpect: expect, RetryJoin: join, DataDir: filepath.Join(t.TempDir(), name),
		HTTPAddr: loopback.Addr(t), RaftAddr: loopback.Addr(t), NodeName: name, NoSync: true, Autopilot: &ap,
		Logger: hclog.New(&hclog.LoggerOptions{Name: name, Output: tWriter{t}, Level: hclog.Debug}),
	}
}

func startAgentWith(t *testing.T, cfg Config) *Agent {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	t.Cleanup(func() { _ = a.Shutdown() })
	return a
}

func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// voters returns the voters' IDs as a server sees them.
func voters(a *Agent) (map[string]bool, error) {
	cfg, err := a.RaftConfiguration()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, s := range cfg.Servers {
		if s.Voter {
			out[s.ID] = true
		}
	}
	return out, nil
}

func TestServersFormOneClusterAndAddALateServer(t *testing.T) {
	// s1 knows nobody; s2 and s3 know only s1: the exchange spreads the rest.
	s1 := startAgent(t, "s1", 3)
	s2 := startAgent(t, "s2", 3, s1.HTTPAddr())
	s3 := startAgent(t, "s3", 3, s1.HTTPAddr())
	all := []*Agent{s1, s2, s3}
	waitFor(t, "one leader with three voters", func() error {
		leaders := 0
		for _, a := range all {
			if a.IsLeader() {
				leaders++
			}
			v, err := voters(a)
			if err != nil {
				return err
			}
			if len(v) != 3 {
				return fmt.Errorf("%s sees %d voters", a.cfg.NodeName, len(v))
			}
		}
		if leaders != 1 {
			return fmt.Errorf("%d leaders", leaders)
		}
		return nil
	})
	for _, a := range all {
		if _, err := a.LeaderHTTPAddr(); err != nil {
			t.Fatalf("%s does not know the leader's HTTP address: %v", a.cfg.NodeName, err)
		}
	}

	// A late server contacts a follower only; the leader adds it.
	var follower *Agent
	for _, a := range all {
		if !a.IsLeader() {
			follower = a
		}
	}
	s4 := startAgent(t, "s4", 3, follower.HTTPAddr())
	waitFor(t, "the late server to be a voter", func() error {
		v, err := voters(s1)
		if err != nil {
			return err
		}
		if !v[s4.raft.ID()] {
			return errors.New("not yet")
		}
		return nil
	})
	waitFor(t, "the late server to know the leader", func() error {
		_, err := s4.LeaderHTTPAddr()
		return err
	})
}

func TestJoinServerRejectsOtherHTTPServers(t *testing.T) {
	a := startAgent(t, "s1", 2)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"hello": "world"}`)
	}))
	defer plain.Close()
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	for _, srv := range []*httptest.Server{plain, missing} {
		_, err := a.JoinServer(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
		if !errors.Is(err, ErrNotServer) {
			t.Fatalf("join %s: %v, want ErrNotServer", srv.URL, err)
		}
	}
	if _, err := a.JoinServer(context.Background(), a.HTTPAddr()); err == nil {
		t.Fatal("joining itself succeeded")
	}
}

func TestDevAgentBootstrapsAndRemovesItsDirectory(t *testing.T) {
	a, err := New(Config{Dev: true, HTTPAddr: loopback.Addr(t), RaftAddr: loopback.Addr(t)})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	dir := a.cfg.DataDir
	waitFor(t, "the dev server to lead", func() error {
		if !a.raft.LeaderReady() {
			return errors.New("not leader")
		}
		return nil
	})
	if err := a.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dev data directory %s still there: %v", dir, err)
	}
}

func TestLeaderServicesProcessEvaluations(t *testing.T) {
	a := startAgent(t, "s1", 1)
	c, err := apiclient.New(a.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	var resp *apiclient.JobRegisterResponse
	waitFor(t, "a job write", func() error {
		var err error
		resp, err = c.Jobs().Register(context.Background(), map[string]any{
			"ID": "web", "Name": "web", "Type": "service", "Datacenters": []string{"dc1"},
			"TaskGroups": []any{map[string]any{"Name": "g", "Count": 1, "Tasks": []any{map[string]any{
				"Name": "t", "Driver": "raw_exec", "Config": map[string]any{"command": "/bin/true"}}}}},
		})
		return err
	})
	// The scheduler, run by the leader, takes the pending evaluation.
	waitFor(t, "the evaluation to leave pending", func() error {
		ev, err := a.State().Snapshot().EvalByID(resp.EvalID)
		if err != nil {
			return err
		}
		if ev == nil || ev.Status == structs.EvalStatusPending {
			return fmt.Errorf("eval %+v", ev)
		}
		return nil
	})
}

// Clients configured with the same servers spread over them: each gets
// every server once, in an order of its own.
func TestSpreadServersShufflesEveryServerOnce(t *testing.T) {
	addrs := []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
	firsts := map[string]int{}
	for range 200 {
		got := spreadServers(addrs, rand.IntN)
		sorted := slices.Sorted(slices.Values(got))
		if !slices.Equal(sorted, addrs) {
			t.Fatalf("spread %v, want a permutation of %v", got, addrs)
		}
		firsts[got[0]]++
	}
	if len(firsts) != len(addrs) {
		t.Fatalf("first servers over 200 clients: %v, want every server", firsts)
	}
	if addrs[0] != "127.0.0.1:1" {
		t.Fatal("the configured list was reordered in place")
	}
	if got := spreadServers(nil, rand.IntN); len(got) != 0 {
		t.Fatalf("no servers: %v", got)
	}
}
