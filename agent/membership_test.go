package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

func api(t *testing.T, a *Agent) *apiclient.Client {
	t.Helper()
	c, err := apiclient.New(a.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func nomadAPI(t *testing.T, a *Agent) *nomad.Client {
	t.Helper()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// peer returns the server with id in a's Raft configuration, nil if none.
func peer(t *testing.T, a *Agent, id string) *structs.RaftServer {
	t.Helper()
	cfg, err := a.RaftConfiguration()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.Servers {
		if s.ID == id {
			return s
		}
	}
	return nil
}

func waitLeader(t *testing.T, a *Agent) {
	t.Helper()
	waitFor(t, a.cfg.NodeName+" to lead", func() error {
		if !a.raft.LeaderReady() {
			return errors.New("not leading")
		}
		return nil
	})
}

func registerMockJob(t *testing.T, a *Agent, id string, count int) {
	t.Helper()
	job := map[string]any{
		"ID": id, "Name": id, "Type": "service", "Datacenters": []string{"dc1"},
		"TaskGroups": []any{map[string]any{
			"Name": "web", "Count": count,
			"Update": map[string]any{"MaxParallel": 1, "MinHealthyTime": 0, "HealthyDeadline": 60e9, "ProgressDeadline": 120e9},
			"Tasks":  []any{map[string]any{"Name": "app", "Driver": "mock", "Config": map[string]any{"run_for": "1h"}}},
		}},
	}
	if _, err := api(t, a).Jobs().Register(bounded(t), job); err != nil {
		t.Fatalf("registering %s: %v", id, err)
	}
}

// A join without the cluster's secret, or with another, is refused with
// 403 and changes nothing; a server with the secret joins as a non-voter
// and is promoted once stable. Real Raft over loopback TCP.
func TestJoinWithAWrongOrMissingSecretIsRefusedAndChangesNothing(t *testing.T) {
	withToken := func(name, token string, join ...string) Config {
		c := testConfig(t, name, 1, join...)
		c.JoinToken = token
		return c
	}
	s1 := startAgentWith(t, withToken("s1", "s3cret"))
	waitLeader(t, s1)
	cfgBefore, _ := s1.RaftConfiguration()

	req := &structs.ServerJoinRequest{Self: structs.ServerMember{ID: "intruder", Name: "intruder", RaftAddr: "127.0.0.1:1", HTTPAddr: "127.0.0.1:1"}}
	for _, token := range []string{"", "guess"} {
		_, err := api(t, s1).Join(bounded(t), req, token)
		var se *apiclient.StatusError
		if !errors.As(err, &se) || se.Code != http.StatusForbidden {
			t.Fatalf("join with token %q: %v, want 403", token, err)
		}
	}
	if cfg, _ := s1.RaftConfiguration(); len(cfg.Servers) != 1 || cfg.Index != cfgBefore.Index {
		t.Fatalf("configuration changed by refused joins: %+v", cfg.Servers)
	}
	if n := len(s1.KnownServers()); n != 1 {
		t.Fatalf("refused joins were recorded: %d members", n)
	}

	// s2 has the secret, s3 guesses; both retry-join s1.
	s2 := startAgentWith(t, withToken("s2", "s3cret", s1.HTTPAddr()))
	s3 := startAgentWith(t, withToken("s3", "guess", s1.HTTPAddr()))
	waitFor(t, "s2 in the configuration", func() error {
		if peer(t, s1, s2.raft.ID()) == nil {
			return errors.New("not yet")
		}
		return nil
	})
	joined := time.Now()
	if p := peer(t, s1, s2.raft.ID()); p.Voter {
		// The stabilization time is 1s: it cannot have been promoted yet.
		t.Fatalf("s2 joined as a voter: %+v", p)
	}
	waitFor(t, "s2 promoted", func() error {
		if p := peer(t, s1, s2.raft.ID()); p == nil || !p.Voter {
			return errors.New("not a voter")
		}
		return nil
	})
	if took := time.Since(joined); took < 900*time.Millisecond {
		t.Fatalf("s2 promoted %s after joining, before the 1s stabilization time", took)
	}
	// By now s3 has tried many times (every 300ms).
	if p := peer(t, s1, s3.raft.ID()); p != nil {
		t.Fatalf("s3, with a wrong secret, is in the configuration: %+v", p)
	}
	if _, ok := s1.members.get(s3.raft.ID()); ok {
		t.Fatal("s3, with a wrong secret, is a known member")
	}
	// Nomad's client reads the health: two healthy voters.
	waitFor(t, "the health to show two voters", func() error {
		h, _, err := nomadAPI(t, s1).Operator().AutopilotServerHealth(nil)
		if err != nil {
			return err
		}
		if !h.Healthy || len(h.Voters) != 2 || len(h.Servers) != 2 || h.Leader != s1.raft.ID() {
			return fmt.Errorf("health %+v", h)
		}
		return nil
	})
}

// The reproduction: one request naming a server that does not
// exist. It joins as a non-voter; the single server keeps its leadership
// and its writes; remove-peer works; autopilot removes it once dead.
func TestBogusServerJoinsAsANonVoterAndTheLeaderKeepsTakingWrites(t *testing.T) {
	s1 := startAgent(t, "s1", 1)
	waitLeader(t, s1)
	nc := nomadAPI(t, s1).Operator()

	// Keep it: cleanup off, through Nomad's client.
	conf, _, err := nc.AutopilotGetConfiguration(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !conf.CleanupDeadServers || conf.ServerStabilizationTime != time.Second || conf.MaxTrailingLogs != 250 {
		t.Fatalf("seeded configuration %+v", conf)
	}
	conf.CleanupDeadServers = false
	if _, err := nc.AutopilotSetConfiguration(conf, nil); err != nil {
		t.Fatal(err)
	}

	bogus := structs.ServerMember{ID: "bogus", Name: "bogus", RaftAddr: "127.0.0.1:1", HTTPAddr: "127.0.0.1:1"}
	if _, err := api(t, s1).Join(bounded(t), &structs.ServerJoinRequest{Self: bogus}, ""); err != nil {
		t.Fatalf("loopback join without a token: %v", err)
	}
	p := peer(t, s1, "bogus")
	if p == nil || p.Voter {
		t.Fatalf("bogus server %+v, want a non-voter", p)
	}
	for i := range 5 {
		registerMockJob(t, s1, fmt.Sprintf("job-%d", i), 1)
	}
	if !s1.IsLeader() {
		t.Fatal("the server lost its leadership to a bogus join")
	}
	waitFor(t, "the health to show the bogus server", func() error {
		h, err := api(t, s1).Operator().AutopilotHealth(bounded(t))
		if err != nil {
			return err
		}
		if h.Healthy || len(h.Servers) != 2 || h.FailureTolerance != 0 {
			return fmt.Errorf("health %+v", h)
		}
		for _, s := range h.Servers {
			if s.ID == "bogus" && (s.Healthy || s.Voter || s.SerfStatus != "failed") {
				return fmt.Errorf("bogus %+v", s)
			}
		}
		return nil
	})
	// Unhealthy: 429, as Nomad.
	resp, err := http.Get("http://" + s1.HTTPAddr() + "/v1/operator/autopilot/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("health with an unhealthy server: %d, want 429", resp.StatusCode)
	}

	if err := api(t, s1).Operator().RaftRemovePeerByID(bounded(t), "bogus"); err != nil {
		t.Fatalf("remove-peer: %v", err)
	}
	if peer(t, s1, "bogus") != nil {
		t.Fatal("remove-peer left the bogus server")
	}

	// Cleanup on, check-and-set: a stale index loses, the current one wins.
	conf, _, err = nc.AutopilotGetConfiguration(nil)
	if err != nil {
		t.Fatal(err)
	}
	conf.CleanupDeadServers = true
	stale := *conf
	stale.ModifyIndex--
	if ok, _, err := nc.AutopilotCASConfiguration(&stale, nil); err != nil || ok {
		t.Fatalf("stale CAS: %v, %v", ok, err)
	}
	if ok, _, err := nc.AutopilotCASConfiguration(conf, nil); err != nil || !ok {
		t.Fatalf("CAS: %v, %v", ok, err)
	}
	if _, err := api(t, s1).Join(bounded(t), &structs.ServerJoinRequest{Self: bogus}, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "autopilot to remove the dead non-voter", func() error {
		if peer(t, s1, "bogus") != nil {
			return errors.New("still there")
		}
		return nil
	})
	registerMockJob(t, s1, "after", 1)
}

// A dev agent is a one-server cluster: it refuses every join.
func TestDevAgentRefusesJoins(t *testing.T) {
	a, err := New(Config{Dev: true, HTTPAddr: loopback.Addr(t), RaftAddr: loopback.Addr(t), NodeName: "dev",
		Logger: hclog.New(&hclog.LoggerOptions{Name: "dev", Output: tWriter{t}, Level: hclog.Debug})})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	t.Cleanup(func() { _ = a.Shutdown() })
	waitLeader(t, a)
	_, err = api(t, a).Join(bounded(t), &structs.ServerJoinRequest{
		Self: structs.ServerMember{ID: "x", RaftAddr: "127.0.0.1:1", HTTPAddr: "127.0.0.1:1"}}, "")
	var se *apiclient.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusForbidden {
		t.Fatalf("join to a dev agent: %v, want 403", err)
	}
	if cfg, _ := a.RaftConfiguration(); len(cfg.Servers) != 1 {
		t.Fatalf("configuration %+v", cfg.Servers)
	}
}

// Two of three servers destroyed: the survivor restarts with a peers.json
// naming itself, leads, and holds every job and deployment it held.
func TestPeersJSONRecoveryKeepsEveryJobAndDeployment(t *testing.T) {
	s1 := startAgent(t, "s1", 3)
	s2 := startAgent(t, "s2", 3, s1.HTTPAddr())
	s3 := startAgent(t, "s3", 3, s1.HTTPAddr())
	servers := []*Agent{s1, s2, s3}
	var leader *Agent
	waitFor(t, "a leader", func() error {
		for _, a := range servers {
			if a.raft.LeaderReady() {
				leader = a
				return nil
			}
		}
		return errors.New("none")
	})
	c, err := New(Config{
		Client: true, Servers: []string{s1.HTTPAddr(), s2.HTTPAddr(), s3.HTTPAddr()}, DataDir: filepath.Join(t.TempDir(), "c1"),
		HTTPAddr: loopback.Addr(t), NodeName: "c1",
		Logger: hclog.New(&hclog.LoggerOptions{Name: "c1", Output: tWriter{t}, Level: hclog.Debug}),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(func() { _ = c.Shutdown() })
	for i := range 3 {
		registerMockJob(t, leader, fmt.Sprintf("web-%d", i), 2)
	}
	waitFor(t, "three deployments", func() error {
		ds, _, err := api(t, leader).Deployments().List(bounded(t), nil)
		if err != nil {
			return err
		}
		if len(ds) != 3 {
			return fmt.Errorf("%d deployments", len(ds))
		}
		// Writes stop once every deployment is over.
		for _, d := range ds {
			if d.Status != "successful" {
				return fmt.Errorf("deployment %s is %s", d.ID, d.Status)
			}
		}
		return nil
	})
	var survivor *Agent
	for _, a := range servers {
		if a != leader {
			survivor = a
		}
	}
	// Every server holds the same state once writes stop.
	var want []byte
	waitFor(t, "the survivor to hold the leader's state", func() error {
		lw, _ := leader.fsm.State().Snapshot().Dump()
		sw, _ := survivor.fsm.State().Snapshot().Dump()
		if string(lw) != string(sw) {
			return errors.New("differs")
		}
		want = sw
		return nil
	})
	_ = c.Shutdown()
	for _, a := range servers {
		_ = a.Shutdown()
	}
	// What the survivor applied up to its shutdown is what it recovers.
	want, _ = survivor.fsm.State().Snapshot().Dump()

	cfg := survivor.cfg
	cfg.Logger = cfg.Logger.Named("recovered")
	content := fmt.Sprintf(`[{"id": %q, "address": %q, "non_voter": false}]`, survivor.raft.ID(), survivor.raft.Addr())
	if err := os.WriteFile(filepath.Join(cfg.DataDir, cluster.PeersJSONFile), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	recovered := startAgentWith(t, cfg)
	waitLeader(t, recovered)
	got, _ := recovered.fsm.State().Snapshot().Dump()
	if string(got) != string(want) {
		t.Fatalf("the recovered state differs from the survivor's:\n%s\n----\n%s", got, want)
	}
	ds, _, err := api(t, recovered).Deployments().List(bounded(t), nil)
	if err != nil || len(ds) != 3 {
		t.Fatalf("deployments after recovery: %d, %v", len(ds), err)
	}
	rc, _ := recovered.RaftConfiguration()
	if len(rc.Servers) != 1 || !rc.Servers[0].Voter {
		t.Fatalf("configuration after recovery %+v", rc.Servers)
	}
	registerMockJob(t, recovered, "after-recovery", 1)
}

// With a join token, a server trusts only answers signed with it: an
// impostor at a retry-join address cannot feed it members or stop its
// bootstrap.
func TestJoinAnswerMustBeSignedWithTheToken(t *testing.T) {
	cfg := testConfig(t, "s1", 3)
	cfg.JoinToken = "s3cret"
	a := startAgentWith(t, cfg)
	impostor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"Self":{"ID":"imp","RaftAddr":"127.0.0.1:1","HTTPAddr":"127.0.0.1:1"},
			"Known":[{"ID":"fake","RaftAddr":"127.0.0.1:2","HTTPAddr":"127.0.0.1:2"}],"Bootstrapped":true}`)
	}))
	defer impostor.Close()
	_, err := a.JoinServer(bounded(t), strings.TrimPrefix(impostor.URL, "http://"))
	if !errors.Is(err, apiclient.ErrJoinUnverified) {
		t.Fatalf("join to an impostor: %v, want ErrJoinUnverified", err)
	}
	if n := len(a.KnownServers()); n != 1 {
		t.Fatalf("the impostor's members were learnt: %+v", a.KnownServers())
	}
	// A real server with the token answers a signed join with a signed answer.
	other := startAgentWith(t, func() Config { c := testConfig(t, "s2", 3); c.JoinToken = "s3cret"; return c }())
	if _, err := a.JoinServer(bounded(t), other.HTTPAddr()); err != nil {
		t.Fatalf("join to a server with the token: %v", err)
	}
}
