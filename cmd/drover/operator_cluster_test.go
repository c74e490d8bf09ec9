package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/agent"
	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
)

// startServers runs three server agents in-process on loopback that form
// one cluster, and waits until all three agree on a leader.
func startServers(t *testing.T) []*agent.Agent {
	t.Helper()
	https := []string{loopback.Addr(t), loopback.Addr(t), loopback.Addr(t)}
	rafts := []string{loopback.Addr(t), loopback.Addr(t), loopback.Addr(t)}
	var out []*agent.Agent
	for i, h := range https {
		var join []string
		for j, o := range https {
			if j != i {
				join = append(join, o)
			}
		}
		name := fmt.Sprintf("s%d", i+1)
		a, err := agent.New(agent.Config{
			Server: true, BootstrapExpect: 3, RetryJoin: join, DataDir: filepath.Join(t.TempDir(), name),
			HTTPAddr: h, RaftAddr: rafts[i], NodeName: name, NoSync: true, Version: "test",
			Logger: hclog.New(&hclog.LoggerOptions{Name: name, Output: testLogWriter{t}, Level: hclog.Info}),
		})
		if err != nil {
			t.Fatal(err)
		}
		a.Start()
		t.Cleanup(func() { _ = a.Shutdown() })
		out = append(out, a)
	}
	waitUntil(t, "three voters and an agreed leader", func() error {
		for _, a := range out {
			peers, _, err := a.Cluster().Configuration()
			if err != nil {
				return err
			}
			if l, _ := a.Cluster().Leader(); l == "" || len(peers) != 3 {
				return fmt.Errorf("%s: leader %q, %d peers", a.HTTPAddr(), l, len(peers))
			}
		}
		return nil
	})
	return out
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func waitUntil(t *testing.T, what string, cond func() error) {
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

// follower returns a server that does not lead.
func follower(servers []*agent.Agent) *agent.Agent {
	for _, a := range servers {
		if !a.Cluster().IsLeader() {
			return a
		}
	}
	return nil
}

func localJobIDs(t *testing.T, a *agent.Agent) string {
	t.Helper()
	c, err := apiclient.New(a.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stubs, _, err := c.Jobs().List(ctx, &apiclient.QueryOptions{AllowStale: true})
	if err != nil {
		return "error: " + err.Error()
	}
	var ids []string
	for _, s := range stubs {
		ids = append(ids, s.ID)
	}
	return strings.Join(ids, ",")
}

func registerTestJob(t *testing.T, a *agent.Agent, id string) {
	t.Helper()
	c, err := apiclient.New(a.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	job := map[string]any{
		"ID": id, "Type": "service", "Datacenters": []string{"dc1"},
		"TaskGroups": []any{map[string]any{"Name": "web", "Count": 1, "Tasks": []any{map[string]any{
			"Name": "app", "Driver": "mock", "Config": map[string]any{"run_for": "1m"},
		}}}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Jobs().Register(ctx, job); err != nil {
		t.Fatalf("registering %s: %v", id, err)
	}
}

func TestServerMembersListsEveryServerAndTheLeader(t *testing.T) {
	servers := startServers(t)
	code, out, errOut := runCLI(t, "", "server", "members", "-address", follower(servers).HTTPAddr())
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "Name") || !strings.Contains(lines[0], "Raft Version") {
		t.Fatalf("output:\n%s", out)
	}
	leaders := 0
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		// Name Address Port Status Leader RaftVersion Build DC Region
		if len(f) != 9 || f[3] != "alive" || f[5] != "3" || f[6] != "test" || f[7] != "dc1" || f[8] != "global" {
			t.Fatalf("row %q", l)
		}
		if f[4] == "true" {
			leaders++
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders in\n%s", leaders, out)
	}
}

func TestSnapshotSaveRestoreThroughAFollower(t *testing.T) {
	servers := startServers(t)
	f := follower(servers)
	registerTestJob(t, f, "before")
	file := filepath.Join(t.TempDir(), "backup.snap")
	code, out, errOut := runCLI(t, "", "operator", "snapshot", "save", "-address", f.HTTPAddr(), file)
	if code != 0 || !strings.Contains(out, "State file written to "+file) {
		t.Fatalf("save: code %d, out %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "", "operator", "snapshot", "save", "-stale", "-address", f.HTTPAddr(), file+".stale")
	if code != 0 {
		t.Fatalf("stale save: code %d, stderr %q", code, errOut)
	}
	registerTestJob(t, f, "after")
	for _, a := range servers {
		waitUntil(t, "both jobs everywhere", func() error {
			if got := localJobIDs(t, a); got != "after,before" {
				return fmt.Errorf("%s has %q", a.HTTPAddr(), got)
			}
			return nil
		})
	}

	code, out, errOut = runCLI(t, "", "operator", "snapshot", "restore", "-address", f.HTTPAddr(), file)
	if code != 0 || !strings.Contains(out, "Snapshot Restored") {
		t.Fatalf("restore: code %d, out %q, stderr %q", code, out, errOut)
	}
	for _, a := range servers {
		waitUntil(t, "the restored state everywhere", func() error {
			if got := localJobIDs(t, a); got != "before" {
				return fmt.Errorf("%s has %q", a.HTTPAddr(), got)
			}
			return nil
		})
	}
	// The cluster keeps working after the restore.
	registerTestJob(t, f, "later")

	code, _, errOut = runCLI(t, "", "operator", "snapshot", "restore", "-address", f.HTTPAddr(), filepath.Join(t.TempDir(), "missing"))
	if code == 0 || !strings.Contains(errOut, "opening snapshot") {
		t.Fatalf("restore of a missing file: code %d, stderr %q", code, errOut)
	}
}

func TestRemovePeerDropsADeadServer(t *testing.T) {
	servers := startServers(t)
	dead := follower(servers)
	deadRaft := dead.Cluster().Addr()
	if err := dead.Shutdown(); err != nil {
		t.Fatal(err)
	}
	var live *agent.Agent
	for _, a := range servers {
		if a != dead {
			live = a
		}
	}
	code, _, errOut := runCLI(t, "", "operator", "raft", "remove-peer", "-address", live.HTTPAddr())
	if code == 0 || !strings.Contains(errOut, "exactly one of -peer-id or -peer-address") {
		t.Fatalf("remove-peer without a peer: code %d, stderr %q", code, errOut)
	}
	code, out, errOut := runCLI(t, "", "operator", "raft", "remove-peer", "-address", live.HTTPAddr(), "-peer-address", deadRaft)
	if code != 0 || !strings.Contains(out, "Removed peer with address") {
		t.Fatalf("remove-peer: code %d, out %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "operator", "raft", "list-peers", "-address", live.HTTPAddr())
	if code != 0 || strings.Contains(out, deadRaft) || len(strings.Split(strings.TrimSpace(out), "\n")) != 3 {
		t.Fatalf("list-peers after removal:\n%s", out)
	}
	code, _, errOut = runCLI(t, "", "operator", "raft", "remove-peer", "-address", live.HTTPAddr(), "-peer-id", "nope")
	if code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("removing an unknown peer: code %d, stderr %q", code, errOut)
	}
	// The two survivors still take writes.
	registerTestJob(t, live, "still-writable")
}
