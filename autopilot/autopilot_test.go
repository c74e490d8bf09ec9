package autopilot

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pilot runs passes of Decide on a fake clock, carrying Memory.
type pilot struct {
	t   *testing.T
	cfg structs.AutopilotConfig
	now time.Time
	mem map[string]Memory
}

func newPilot(t *testing.T) *pilot {
	cfg := structs.DefaultAutopilotConfig()
	return &pilot{t: t, cfg: cfg, now: t0}
}

// pass advances the clock by d and decides.
func (p *pilot) pass(d time.Duration, servers ...Server) Decision {
	p.now = p.now.Add(d)
	dec := Decide(Input{Config: p.cfg, Servers: servers, Memory: p.mem, Now: p.now})
	p.mem = dec.Memory
	return dec
}

func leader(id string, index uint64) Server {
	return Server{ID: id, Voter: true, Leader: true, Stats: &Stats{LastTerm: 2, LastIndex: index}}
}

func follower(id string, voter bool, index uint64) Server {
	return Server{ID: id, Voter: voter, Stats: &Stats{LastContact: 10 * time.Millisecond, LastTerm: 2, LastIndex: index}}
}

func silent(id string, voter bool) Server { return Server{ID: id, Voter: voter} }

func actions(d Decision) string {
	return fmt.Sprintf("promote=%s remove=%s", strings.Join(d.Promote, ","), strings.Join(d.Remove, ","))
}

func want(t *testing.T, at string, d Decision, expect string) {
	t.Helper()
	if got := actions(d); got != expect {
		t.Fatalf("%s: %s, want %s", at, got, expect)
	}
}

func TestNewServerIsPromotedOnlyAfterStabilizationTime(t *testing.T) {
	p := newPilot(t)
	servers := func() []Server {
		return []Server{leader("a", 100), follower("b", true, 100), follower("c", true, 100), follower("d", false, 100)}
	}
	want(t, "joined", p.pass(0, servers()...), "promote= remove=")
	want(t, "healthy 9.9s", p.pass(9900*time.Millisecond, servers()...), "promote= remove=")
	d := p.pass(100*time.Millisecond, servers()...)
	want(t, "healthy 10s", d, "promote=d remove=")
	if !d.Health.Healthy || d.Health.FailureTolerance != 1 || d.Health.Leader != "a" {
		t.Fatalf("health %+v", d.Health)
	}
}

func TestServerBehindTheLogIsNotPromotedUntilItCatchesUp(t *testing.T) {
	p := newPilot(t)
	for i := range 30 {
		// 1,000 entries behind, for a minute: unhealthy, never promoted.
		d := p.pass(2*time.Second, leader("a", 5000), follower("b", false, 4000))
		want(t, fmt.Sprintf("behind, pass %d", i), d, "promote= remove=")
		if d.Health.Healthy || d.Health.Servers[1].Healthy {
			t.Fatalf("a server 1,000 entries behind is healthy: %+v", d.Health.Servers[1])
		}
	}
	// Within MaxTrailingLogs: healthy from now, promoted 10s later.
	caughtUp := p.now.Add(time.Second)
	d := p.pass(time.Second, leader("a", 5000), follower("b", false, 4800))
	want(t, "caught up", d, "promote= remove=")
	if h := d.Health.Servers[1]; !h.Healthy || !h.StableSince.Equal(caughtUp) || h.LastIndex != 4800 {
		t.Fatalf("caught-up server %+v", h)
	}
	want(t, "caught up 9s", p.pass(9*time.Second, leader("a", 5100), follower("b", false, 5100)), "promote= remove=")
	want(t, "caught up 10s", p.pass(time.Second, leader("a", 5100), follower("b", false, 5100)), "promote=b remove=")
}

func TestHealthRules(t *testing.T) {
	cfg := structs.DefaultAutopilotConfig()
	l := leader("a", 1000)
	for _, tc := range []struct {
		name string
		s    Server
		want bool
	}{
		{"caught up", follower("b", false, 1000), true},
		{"250 behind", follower("b", false, 750), true},
		{"251 behind", follower("b", false, 749), false},
		{"no answer", silent("b", false), false},
		{"old term", Server{ID: "b", Stats: &Stats{LastContact: time.Millisecond, LastTerm: 1, LastIndex: 1000}}, false},
		{"never heard the leader", Server{ID: "b", Stats: &Stats{LastContact: -1, LastTerm: 2, LastIndex: 1000}}, false},
		{"no contact for 201ms", Server{ID: "b", Stats: &Stats{LastContact: 201 * time.Millisecond, LastTerm: 2, LastIndex: 1000}}, false},
	} {
		if got := isHealthy(cfg, tc.s, &l); got != tc.want {
			t.Errorf("%s: healthy %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestSilentServerIsNeverPromotedAndIsRemovedWhenDead(t *testing.T) {
	p := newPilot(t)
	// A bogus join: a non-voter that never answers.
	for range 10 {
		want(t, "silent", p.pass(time.Second, leader("a", 10), silent("bogus", false)), "promote= remove=")
	}
	want(t, "silent 10s", p.pass(time.Second, leader("a", 10), silent("bogus", false)), "promote= remove=bogus")

	p = newPilot(t)
	p.cfg.CleanupDeadServers = false
	for range 30 {
		want(t, "no cleanup", p.pass(time.Second, leader("a", 10), silent("bogus", false)), "promote= remove=")
	}
}

func TestPausedServerIsPromotedOnlyAfterItAnswersAndCatchesUpAgain(t *testing.T) {
	p := newPilot(t)
	p.cfg.ServerStabilizationTime = 2 * time.Second
	p.cfg.CleanupDeadServers = false
	want(t, "joined", p.pass(0, leader("a", 10), follower("b", false, 10)), "promote= remove=")
	// Paused just after joining: no answer for a while, the log moves on.
	for i := range 10 {
		want(t, "paused", p.pass(500*time.Millisecond, leader("a", uint64(100*i)), silent("b", false)), "promote= remove=")
	}
	// Resumed, far behind: still not promoted.
	want(t, "resumed", p.pass(time.Second, leader("a", 2000), follower("b", false, 10)), "promote= remove=")
	want(t, "catching up", p.pass(time.Second, leader("a", 2000), follower("b", false, 1500)), "promote= remove=")
	want(t, "caught up", p.pass(time.Second, leader("a", 2000), follower("b", false, 2000)), "promote= remove=")
	want(t, "caught up 2s", p.pass(2*time.Second, leader("a", 2000), follower("b", false, 2000)), "promote=b remove=")
}

func TestDeadVoterIsRemovedOnlyOnceAReplacementHasJoined(t *testing.T) {
	p := newPilot(t)
	p.cfg.ServerStabilizationTime = time.Second
	three := func(extra ...Server) []Server {
		return append([]Server{leader("a", 10), follower("b", true, 10), silent("c", true)}, extra...)
	}
	for range 20 {
		d := p.pass(time.Second, three()...)
		want(t, "no replacement", d, "promote= remove=")
		if d.Health.FailureTolerance != 0 || d.Health.Healthy {
			t.Fatalf("health with a dead voter: %+v", d.Health)
		}
	}
	// A replacement joins as a non-voter: c goes at once, d is promoted
	// once stable.
	want(t, "replacement joined", p.pass(time.Second, three(follower("d", false, 10))...), "promote= remove=c")
	want(t, "replacement stable", p.pass(time.Second, leader("a", 10), follower("b", true, 10), follower("d", false, 10)), "promote=d remove=")
}

func TestMinQuorumAndTheLeaderAreNeverRemoved(t *testing.T) {
	p := newPilot(t)
	p.cfg.ServerStabilizationTime = time.Second
	p.cfg.MinQuorum = 3
	servers := []Server{leader("a", 10), follower("b", true, 10), silent("c", true), follower("d", false, 10)}
	want(t, "d joined", p.pass(0, servers...), "promote= remove=")
	for range 5 {
		want(t, "min quorum", p.pass(time.Second, servers...), "promote=d remove=")
	}
	// The leader is never dead, even without stats.
	p = newPilot(t)
	p.cfg.ServerStabilizationTime = time.Second
	for range 5 {
		d := p.pass(time.Second, Server{ID: "a", Voter: true, Leader: true})
		want(t, "leader", d, "promote= remove=")
	}
}

func TestDecisionIsSortedAndDeterministic(t *testing.T) {
	servers := []Server{follower("z", false, 10), leader("a", 10), follower("m", false, 10)}
	var mem map[string]Memory
	for range 2 {
		d := Decide(Input{Config: structs.DefaultAutopilotConfig(), Servers: servers, Memory: mem, Now: t0})
		mem = d.Memory
	}
	d := Decide(Input{Config: structs.DefaultAutopilotConfig(), Servers: servers, Memory: mem, Now: t0.Add(time.Minute)})
	if !slices.Equal(d.Promote, []string{"m", "z"}) {
		t.Fatalf("promote %v", d.Promote)
	}
	var ids []string
	for _, h := range d.Health.Servers {
		ids = append(ids, h.ID)
	}
	if !slices.Equal(ids, []string{"a", "m", "z"}) {
		t.Fatalf("health order %v", ids)
	}
}
