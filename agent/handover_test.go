package agent

import (
	"fmt"
	"testing"
)

// A leader asked to remove itself (operator raft remove-peer) hands its
// leadership to another voter first, and the new leader removes it: the
// answer is 200, the two others hold the configuration, and one of them
// leads without waiting out an election.
func TestLeaderRemovingItselfHandsOverFirst(t *testing.T) {
	s1 := startAgent(t, "s1", 3)
	s2 := startAgent(t, "s2", 3, s1.HTTPAddr())
	s3 := startAgent(t, "s3", 3, s1.HTTPAddr())
	all := []*Agent{s1, s2, s3}
	var leader *Agent
	waitFor(t, "one leader with three voters", func() error {
		leader = nil
		for _, a := range all {
			v, err := voters(a)
			if err != nil {
				return err
			}
			if len(v) != 3 {
				return fmt.Errorf("%s sees %d voters", a.cfg.NodeName, len(v))
			}
			if a.IsLeader() {
				leader = a
			}
		}
		if leader == nil {
			return fmt.Errorf("no leader")
		}
		for _, a := range all {
			if _, err := a.LeaderHTTPAddr(); err != nil {
				return err
			}
		}
		return nil
	})
	if err := api(t, leader).Operator().RaftRemovePeerByID(bounded(t), leader.raft.ID()); err != nil {
		t.Fatalf("the leader removing itself: %v", err)
	}
	if leader.IsLeader() {
		t.Fatal("the removed server still leads")
	}
	for _, a := range all {
		if a == leader {
			continue
		}
		if p := peer(t, a, leader.raft.ID()); p != nil {
			t.Errorf("%s still lists the removed server", a.cfg.NodeName)
		}
	}
}
