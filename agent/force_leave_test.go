package agent

import (
	"errors"
	"fmt"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/internal/loopback"
)

// A server that does not bootstrap (bootstrap_expect 0) is joined by its
// serf address, as Nomad's API clients do; force-leave takes it out of
// the Raft configuration and keeps it out while it runs (listed as
// leaving), until it is joined again by address.
func TestJoinBySerfAddressAndForceLeave(t *testing.T) {
	s1 := startAgent(t, "s1", 1)
	waitLeader(t, s1)
	cfg := testConfig(t, "s2", 0)
	cfg.SerfAddr = loopback.Addr(t)
	s2 := startAgentWith(t, cfg)
	a := nomadAPI(t, s1).Agent()

	if n, err := a.Join("127.0.0.1:1"); err == nil || n != 0 {
		t.Fatalf("join of nothing: %d, %v", n, err)
	}
	if n, err := a.Join(cfg.SerfAddr); err != nil || n != 1 {
		t.Fatalf("join by serf address: %d, %v", n, err)
	}
	s2ID := s2.raft.ID()
	waitFor(t, "s2 in s1's Raft configuration", func() error {
		if peer(t, s1, s2ID) == nil {
			return errors.New("not yet")
		}
		return nil
	})

	if err := a.ForceLeave("nobody.global"); err != nil {
		t.Fatalf("force-leave of an unknown server: %v", err)
	}
	if err := a.ForceLeave("s1.global"); err == nil {
		t.Fatal("a server forced itself out")
	}
	if err := a.ForceLeave("s2.global"); err != nil {
		t.Fatal(err)
	}
	status := func() string {
		m, err := a.Members()
		if err != nil {
			t.Fatal(err)
		}
		for _, am := range m.Members {
			if am.Name == "s2.global" {
				return am.Status
			}
		}
		return "absent"
	}
	if peer(t, s1, s2ID) != nil || status() != "leaving" {
		t.Fatalf("after force-leave: peer %v, status %s", peer(t, s1, s2ID), status())
	}
	// s2 keeps announcing itself; s1 keeps it out.
	time.Sleep(formedInterval + time.Second)
	if peer(t, s1, s2ID) != nil {
		t.Fatal("s2 was added back while forced out")
	}
	// Joined again by address, it is let back.
	if n, err := a.Join(s2.HTTPAddr()); err != nil || n != 1 {
		t.Fatalf("join again: %d, %v", n, err)
	}
	waitFor(t, "s2 back in the configuration", func() error {
		if peer(t, s1, s2ID) == nil || status() != "alive" {
			return fmt.Errorf("peer %v, status %s", peer(t, s1, s2ID), status())
		}
		return nil
	})
	// Pruned once stopped, it is no longer listed.
	_ = s2.Shutdown()
	if err := a.ForceLeaveWithOptions("s2.global", nomad.ForceLeaveOpts{Prune: true}); err != nil {
		t.Fatal(err)
	}
	if st := status(); st != "absent" || peer(t, s1, s2ID) != nil {
		t.Fatalf("after prune: %s, %v", st, peer(t, s1, s2ID))
	}
}
