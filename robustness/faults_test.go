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
	Kind   string        // "partition", "lossy", "pause", "kill", "disk"
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
// paused, the leader killed and the leader's links made lossy. Full
// disks have a test of their own (TestFullDisk).
var smokeSchedule = []fault{
	{Kind: "partition", Target: "s1", At: 2 * time.Second, For: 20 * time.Second},
	{Kind: "partition", Target: "s2", At: 27 * time.Second, For: 20 * time.Second},
	{Kind: "partition", Target: "s3", At: 52 * time.Second, For: 20 * time.Second},
	{Kind: "pause", Target: "follower", At: 77 * time.Second, For: 5 * time.Second},
	{Kind: "kill", Target: "leader", At: 86 * time.Second, For: 3 * time.Second},
	{Kind: "lossy", Target: "leader", At: 94 * time.Second, For: 10 * time.Second},
}

// lossRate is the share of packets a lossy link drops, each way.
const lossRate = "0.3"

// randomSchedule fills d with faults drawn from seed: the same seed gives
// the same schedule.
func randomSchedule(seed int64, d time.Duration) []fault {
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	kinds := []string{"partition", "partition", "pause", "kill", "disk", "lossy"}
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
// It returns the heal. With a loss rate ("0.3"), only that share of those
// packets is dropped, each drawn at random: a lossy link, on which TCP
// retransmits (netem, which would add delay too, is not in every kernel:
// iptables' statistic match is).
func (c *cluster) partition(s *server, loss string) (func(), error) {
	var drop []string
	if loss != "" {
		drop = []string{"-m", "statistic", "--mode", "random", "--probability", loss}
	}
	drop = append(drop, "-j", "DROP")
	var rules [][]string
	for _, o := range c.servers {
		if o == s {
			continue
		}
		for _, p := range []string{port(o.http), port(o.raft)} {
			rules = append(rules, append([]string{"-p", "tcp", "-o", "lo", "-m", "owner", "--uid-owner", strconv.Itoa(s.uid), "--dport", p}, drop...))
		}
		for _, p := range []string{port(s.http), port(s.raft)} {
			rules = append(rules, append([]string{"-p", "tcp", "-o", "lo", "-m", "owner", "--uid-owner", strconv.Itoa(o.uid), "--dport", p}, drop...))
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
	case "partition", "lossy":
		loss := ""
		if f.Kind == "lossy" {
			loss = lossRate
		}
		heal, err := c.partition(s, loss)
		if err != nil {
			t.Fatalf("partition %s: %v", s.name, err)
		}
		return heal
	case "disk":
		free, err := fillDisk(s.dataDir)
		if err != nil {
			t.Fatalf("filling %s's disk: %v", s.name, err)
		}
		return free
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
		wasLeader := c.leader() == s
		heal := c.inject(t, f, s)
		from := time.Now()
		if f.Kind == "disk" && wasLeader {
			// A leader that cannot write its log steps down: the next
			// write it fails to store makes it a follower, and one of
			// the others is elected.
			stepped := false
			for time.Since(from) < f.For {
				if l := c.leader(); l != nil && l != s {
					stepped = true
					t.Logf("%s (full disk) stepped down after %v; %s leads", s.name, time.Since(from).Round(100*time.Millisecond), l.name)
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if !stepped {
				t.Errorf("%s, the leader, still led %v after its disk filled", s.name, f.For)
			}
		}
		time.Sleep(time.Until(from.Add(f.For)))
		heal()
		out = append(out, window{fault: f, server: s.name, from: from, to: time.Now()})
		c.healed(t, f, s)
	}
	return out
}

// healed checks, after each heal, that the three servers converge: each
// applies what the leader had and no two copies contradict each other.
// After a full disk the server is also restarted on its data directory:
// the log and snapshots it wrote while its disk was full must read back.
func (c *cluster) healed(t testing.TB, f fault, s *server) {
	took, err := c.converge(90*time.Second, false)
	if err != nil {
		t.Errorf("after %s on %s: %v", f, s.name, err)
		return
	}
	c.mu.Lock()
	c.convergences++
	c.mu.Unlock()
	t.Logf("healed: %s; the servers converged in %v", f, took.Round(100*time.Millisecond))
	if f.Kind != "disk" {
		return
	}
	s.signal(syscall.SIGKILL)
	s.wait()
	c.start(s)
	if took, err = c.converge(90*time.Second, false); err != nil {
		t.Errorf("after %s restarted on the data written while its disk was full: %v", s.name, err)
		return
	}
	t.Logf("%s restarted on its data dir; the servers converged in %v", s.name, took.Round(100*time.Millisecond))
}
