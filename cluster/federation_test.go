package cluster

import (
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func fedMember(id, region string) structs.ServerMember {
	return structs.ServerMember{ID: id, Region: region, HTTPAddr: "127.0.0.1:" + id, RaftAddr: "127.0.0.1:9" + id}
}

func TestFederationLearnsOtherRegionsOnly(t *testing.T) {
	t0 := time.Unix(1000, 0)
	f := NewFederation("east", 30*time.Second)
	f.LearnDirect(fedMember("1", "east"), t0)
	f.LearnDirect(fedMember("2", "west"), t0)
	f.Learn([]structs.FederatedServer{
		{ServerMember: fedMember("3", "north"), Age: 5 * time.Second},
		{ServerMember: fedMember("4", "west"), Age: 40 * time.Second}, // older than the TTL
		{ServerMember: structs.ServerMember{ID: "5", Region: "west"}}, // no address
		{ServerMember: fedMember("6", "")},                            // no region: the local one
	}, t0)
	if got := f.Regions(); !slices.Equal(got, []string{"north", "west"}) {
		t.Fatalf("regions %v", got)
	}
	if got := f.Servers("west"); len(got) != 1 || got[0].ID != "2" {
		t.Fatalf("west servers %v", got)
	}
	list := f.List(t0.Add(time.Second))
	if len(list) != 2 || list[0].ID != "2" || list[0].Age != time.Second || list[1].Age != 6*time.Second {
		t.Fatalf("list %+v", list)
	}
}

// A server nobody hears from ages out everywhere: second-hand copies carry
// their age, so two servers passing a dead one back and forth do not keep
// it alive.
func TestFederationSecondHandCopiesDoNotKeepADeadServer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ttl := 10 * time.Second
	a, b := NewFederation("east", ttl), NewFederation("east", ttl)
	a.LearnDirect(fedMember("9", "west"), t0)
	b.Learn(a.List(t0.Add(time.Second)), t0.Add(time.Second))
	for now := t0; now.Before(t0.Add(3 * ttl)); now = now.Add(time.Second) {
		a.Learn(b.List(now), now)
		b.Learn(a.List(now), now)
		a.Expire(now)
		b.Expire(now)
	}
	if len(a.Regions()) != 0 || len(b.Regions()) != 0 {
		t.Fatalf("dead server kept: %v %v", a.List(t0), b.List(t0))
	}
	if _, ok := a.Gone("west"); !ok {
		t.Fatal("west not recorded as gone")
	}
	// Heard from again: back, no longer gone.
	a.LearnDirect(fedMember("9", "west"), t0.Add(time.Hour))
	if _, ok := a.Gone("west"); ok || len(a.Servers("west")) != 1 {
		t.Fatal("west not back")
	}
}

func TestFederationKeepsTheFreshestRecord(t *testing.T) {
	t0 := time.Unix(1000, 0)
	f := NewFederation("east", time.Minute)
	old := fedMember("1", "west")
	f.LearnDirect(old, t0)
	moved := old
	moved.HTTPAddr = "127.0.0.1:7777"
	f.Learn([]structs.FederatedServer{{ServerMember: moved, Age: 20 * time.Second}}, t0.Add(10*time.Second))
	if got := f.Servers("west")[0].HTTPAddr; got != old.HTTPAddr {
		t.Fatalf("older news replaced the record: %s", got)
	}
	f.Learn([]structs.FederatedServer{{ServerMember: moved, Age: time.Second}}, t0.Add(10*time.Second))
	if got := f.Servers("west")[0].HTTPAddr; got != moved.HTTPAddr {
		t.Fatalf("fresher news ignored: %s", got)
	}
	if dropped := f.Expire(t0.Add(2 * time.Minute)); len(dropped) != 1 {
		t.Fatalf("dropped %v", dropped)
	}
}
