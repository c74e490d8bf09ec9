package robustness

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A fault is data: what, on which server (by role when it starts), when
// from the start of the schedule, and for how long.
type fault struct {
	Kind   string        // "partition", "pause", "kill"
	Target string        // "leader", "follower", or a server's name ("s1")
	At     time.Duration // from the start of the schedule
	For    time.Duration // how long until healed (kill: until restarted)
}

func (f fault) String() string {
	return fmt.Sprintf("%s %s at %v for %v", f.Kind, f.Target, f.At, f.For)
}

// smokeSchedule is the short form run by go test (make test): each
// server cut off in turn for 20 s (one of them is the leader, one the
// client's server: the rollout must go on meanwhile), then a follower
// paused and the leader killed.
var smokeSchedule = []fault{
	{Kind: "partition", Target: "s1", At: 2 * time.Second, For: 20 * time.Second},
	{Kind: "partition", Target: "s2", At: 27 * time.Second, For: 20 * time.Second},
	{Kind: "partition", Target: "s3", At: 52 * time.Second, For: 20 * time.Second},
	{Kind: "pause", Target: "follower", At: 77 * time.Second, For: 5 * time.Second},
	{Kind: "kill", Target: "leader", At: 86 * time.Second, For: 3 * time.Second},
}

// randomSchedule fills d with faults drawn from seed: the same seed gives
// the same schedule.
func randomSchedule(seed int64, d time.Duration) []fault {
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	kinds := []string{"partition", "partition", "pause", "kill"}
	var out []fault
	at := 2 * time.Second
	for at < d-20*time.Second {
		f := fault{
			Kind:   kinds[r.IntN(len(kinds))],
			Target: []string{"leader", "follower"}[r.IntN(2)],
			At:     at,
			For:    time.Duration(3+r.IntN(10)) * time.Second,
		}
		out = append(out, f)
		at += f.For + time.Duration(5+r.IntN(10))*time.Second
	}
	return out
}

// pick returns the server a fault targets.
func (c *cluster) pick(target string) *server {
	for _, s := range c.servers {
		if s.name == target {
			return s
		}
	}
	l := c.waitLeader(60 * time.Second)
	if target == "leader" {
		return l
	}
	for _, s := range c.servers {
		if s != l {
			return s
		}
	}
	return nil
}

// partition cuts s off from the other servers both ways, by its Unix
// user: the packets it sends to their ports, and those they send to its,
// are dropped. Its HTTP port stays open to the client and the test (root).
// It returns the heal.
func (c *cluster) partition(s *server) (func(), error) {
	var rules [][]string
	for _, o := range c.servers {
		if o == s {
			continue
		}
		for _, p := range []string{port(o.http), port(o.raft)} {
			rules = append(rules, []string{"-p", "tcp", "-o", "lo", "-m", "owner", "--uid-owner", strconv.Itoa(s.uid), "--dport", p, "-j", "DROP"})
		}
		for _, p := range []string{port(s.http), port(s.raft)} {
			rules = append(rules, []string{"-p", "tcp", "-o", "lo", "-m", "owner", "--uid-owner", strconv.Itoa(o.uid), "--dport", p, "-j", "DROP"})
		}
	}
	var added [][]string
	heal := func() {
		for _, r := range added {
			_ = exec.Command("iptables", append([]string{"-D", "OUTPUT"}, r...)...).Run()
		}
		added = nil
	}
	c.t.Cleanup(heal) // a run that fails mid-partition leaves no rule behind
	for _, r := range rules {
		if out, err := exec.Command("iptables", append([]string{"-I", "OUTPUT"}, r...)...).CombinedOutput(); err != nil {
			heal()
			return nil, fmt.Errorf("iptables: %v: %s", err, strings.TrimSpace(string(out)))
		}
		added = append(added, r)
	}
	return heal, nil
}

// inject runs f on s and returns its heal.
func (c *cluster) inject(t testing.TB, f fault, s *server) func() {
	t.Logf("fault: %s (%s)", f, s.name)
	switch f.Kind {
	case "partition":
		heal, err := c.partition(s)
		if err != nil {
			t.Fatalf("partition %s: %v", s.name, err)
		}
		return heal
	case "pause":
		s.signal(syscall.SIGSTOP)
		return func() { s.signal(syscall.SIGCONT) }
	case "kill":
		s.signal(syscall.SIGKILL)
		s.wait()
		return func() { c.start(s) }
	}
	t.Fatalf("unknown fault %q", f.Kind)
	return nil
}

// window is when a fault was in place.
type window struct {
	fault    fault
	server   string
	from, to time.Time
}

// run plays the schedule and returns once every fault healed, with when
// each was in place.
func (c *cluster) run(t testing.TB, schedule []fault) []window {
	start := time.Now()
	var out []window
	for _, f := range schedule {
		time.Sleep(time.Until(start.Add(f.At)))
		s := c.pick(f.Target)
		heal := c.inject(t, f, s)
		from := time.Now()
		time.Sleep(f.For)
		heal()
		out = append(out, window{fault: f, server: s.name, from: from, to: time.Now()})
		t.Logf("healed: %s", f)
	}
	return out
}
