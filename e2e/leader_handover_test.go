package e2e

import (
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
)

// A leader told to stop (SIGTERM) hands its leadership over before its
// listener closes: with writes sent continuously, over new connections,
// through each of the three servers, the stopping leader's included, none
// fails — the stopping leader sends those it takes meanwhile on to the new
// leader —, none is lost, and a new leader is known within a second or so.
// Only connections refused once the leader's listener has closed are not
// served, as by any stopped server.
func TestLeaderHandsOverOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three agent processes")
	}
	dir := t.TempDir()
	procs, _ := startThreeServers(t, dir, `log_level = "debug"`)
	follower := findFollower(t, procs)
	var leader *agentProc
	var leaderRaft string
	eventually(t, 30*time.Second, "the leader", func() error {
		addr, err := follower.client().Status().Leader(ctx(t))
		if err != nil {
			return err
		}
		for _, p := range procs {
			self, err := p.client().Agent().Self(ctx(t))
			if err == nil && self.Config.Addresses.Raft == addr {
				leader, leaderRaft = p, addr
				return nil
			}
		}
		return fmt.Errorf("leader %q is none of the servers", addr)
	})
	// The keyring's first key, for the variables the writer puts.
	eventually(t, 30*time.Second, "a first write", func() error {
		_, err := leader.client().KeyringList(ctx(t))
		return err
	})
	var stopping atomic.Bool
	var targets []upgradeTarget
	for _, p := range procs {
		down := func() bool { return false }
		if p == leader {
			down = stopping.Load
		}
		targets = append(targets, upgradeTarget{name: p.name, addr: func() string { return p.httpAddr }, down: down})
	}
	w := upgradeStartWriter(t, "", 10*time.Millisecond, targets)
	// A blocking query held open on the leader, as the web UI's and
	// clients' are: its HTTP server then drains for its whole 5 s.
	_, meta, err := leader.client().Jobs().List(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _, _ = leader.client().Jobs().List(bounded(t, 2*time.Minute),
			&apiclient.QueryOptions{WaitIndex: meta.LastIndex + 1_000_000, WaitTime: time.Minute})
	}()
	time.Sleep(time.Second)

	start := time.Now()
	stopping.Store(true)
	_ = leader.cmd.Process.Signal(syscall.SIGTERM)
	var others []*agentProc
	for _, p := range procs {
		if p != leader {
			others = append(others, p)
		}
	}
	var elected time.Duration
	eventually(t, 20*time.Second, "a new leader", func() error {
		addr, err := others[0].client().Status().Leader(ctx(t))
		if err != nil {
			return err
		}
		if addr == "" || addr == leaderRaft {
			return fmt.Errorf("leader %q", addr)
		}
		elected = time.Since(start)
		return nil
	})
	select {
	case <-leader.done:
	case <-time.After(40 * time.Second):
		t.Fatal("the leader did not exit within 40s of SIGTERM")
	}
	exited := time.Since(start)
	time.Sleep(time.Second)
	sent, acked, refused, notUp := w.stop()
	t.Logf("new leader known %v after SIGTERM, the old one exited after %v; %d writes sent, %d acknowledged, %d refused, %d not taken by the stopped server",
		elected.Round(time.Millisecond), exited.Round(time.Millisecond), sent, len(acked), len(refused), notUp)
	if len(refused) > 0 {
		t.Errorf("%d writes failed during the leader's stop:\n%s", len(refused), strings.Join(refused[:min(len(refused), 10)], "\n"))
	}
	if !strings.Contains(leader.logs.String(), "leadership handed over") {
		t.Errorf("the leader did not log its handover")
	}
	upgradeCheckAcked(t, others[0].client(), acked)
}
