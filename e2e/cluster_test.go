package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
)

// startCluster starts three servers that find each other through
// -retry-join and waits until all agree on a leader.
func startCluster(t testing.TB) []*server {
	t.Helper()
	servers := []*server{newServer(t, "s1", 3), newServer(t, "s2", 3), newServer(t, "s3", 3)}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.join = append(s.join, o.httpAddr)
			}
		}
	}
	for _, s := range servers {
		s.start()
	}
	waitAgreedLeader(t, servers)
	return servers
}

// waitAgreedLeader waits until every server names the same leader and
// lists three voters, and returns the leader.
func waitAgreedLeader(t testing.TB, servers []*server) *server {
	t.Helper()
	var leader *server
	eventually(t, 60*time.Second, "a leader all servers agree on", func() error {
		var seen string
		for _, s := range servers {
			l, err := s.client().Status().Leader(ctx(t))
			if err != nil {
				return err
			}
			if l == "" || (seen != "" && l != seen) {
				return fmt.Errorf("%s sees leader %q, another sees %q", s.name, l, seen)
			}
			seen = l
			peers, err := s.client().Status().Peers(ctx(t))
			if err != nil {
				return err
			}
			if len(peers) != 3 {
				return fmt.Errorf("%s lists peers %v", s.name, peers)
			}
		}
		for _, s := range servers {
			if s.raftAddr == seen {
				leader = s
			}
		}
		if leader == nil {
			return fmt.Errorf("leader %q is none of the servers", seen)
		}
		return nil
	})
	return leader
}

// register writes a job through s, retrying while the cluster has no
// leader; it returns once the write is acknowledged.
func register(t testing.TB, s *server, id string, acked map[string]bool) {
	t.Helper()
	eventually(t, 30*time.Second, "registering "+id+" via "+s.name, func() error {
		resp, err := s.client().Jobs().Register(ctx(t), jobJSON(id))
		if err != nil {
			return err
		}
		if resp.EvalID == "" || resp.JobModifyIndex == 0 {
			return fmt.Errorf("incomplete answer %+v", resp)
		}
		acked[id] = true
		return nil
	})
}

// localJobs lists the jobs s holds, read from its own copy (?stale).
func localJobs(t testing.TB, s *server) (string, error) {
	stubs, _, err := s.client().Jobs().List(ctx(t), &apiclient.QueryOptions{AllowStale: true})
	if err != nil {
		return "", err
	}
	ids := map[string]bool{}
	for _, j := range stubs {
		ids[j.ID] = true
	}
	return sortedKeys(ids), nil
}

func TestThreeServersSurviveLeaderKill(t *testing.T) {
	servers := startCluster(t)
	leader := waitAgreedLeader(t, servers)
	t.Logf("first leader: %s", leader.name)

	acked := map[string]bool{}
	for i := 0; i < 9; i++ {
		register(t, servers[i%3], fmt.Sprintf("job-a%d", i), acked)
	}
	var follower *server
	for _, s := range servers {
		if s != leader {
			follower = s
		}
	}

	// A malformed write sent to a follower is forwarded and refused with 400.
	resp, err := http.Post("http://"+follower.httpAddr+"/v1/jobs", "application/json", strings.NewReader(`{"Job": {"ID": `))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("malformed write via a follower: status %d, want 400", resp.StatusCode)
	}

	// Kill the leader; a new one takes writes.
	leader.kill()
	var rest []*server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	eventually(t, 30*time.Second, "a new leader", func() error {
		l, err := rest[0].client().Status().Leader(ctx(t))
		if err != nil {
			return err
		}
		if l == "" || l == leader.raftAddr {
			return fmt.Errorf("leader is %q", l)
		}
		return nil
	})
	for i := 0; i < 6; i++ {
		register(t, rest[i%2], fmt.Sprintf("job-b%d", i), acked)
	}

	// The killed server restarts from its bolt files and catches up.
	leader.start()
	want := sortedKeys(acked)
	for _, s := range servers {
		eventually(t, 60*time.Second, s.name+" to hold every acknowledged job", func() error {
			got, err := localJobs(t, s)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("%s holds %s, want %s", s.name, got, want)
			}
			return nil
		})
	}
	waitAgreedLeader(t, servers)
	// leader.output() is the restarted process's output alone.
	if strings.Contains(leader.output(), "bootstrapped the cluster") {
		t.Fatal("the restarted server bootstrapped again")
	}

	// A job read through a follower without ?stale is answered by the leader.
	job, _, err := follower.client().Jobs().Info(ctx(t), "job-a0", nil)
	if err != nil || job.ID != "job-a0" {
		t.Fatalf("job info via %s = (%v, %v)", follower.name, job, err)
	}
	if _, _, err := follower.client().Jobs().Info(ctx(t), "no-such-job", nil); !apiclient.IsNotFound(err) {
		t.Fatalf("unknown job: error %v, want 404", err)
	}

	// The CLI lists the three peers, one leader.
	out, err := exec.Command(droverBin, "operator", "raft", "list-peers", "-address", "http://"+follower.httpAddr).CombinedOutput()
	if err != nil {
		t.Fatalf("list-peers: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "Node") || strings.Count(string(out), "leader") != 1 {
		t.Fatalf("list-peers output:\n%s", out)
	}
	t.Logf("list-peers:\n%s", out)
}

func TestJoinToNonServerIsAClearError(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintln(w, "<html>hello</html>")
	}))
	defer other.Close()
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()

	s := newServer(t, "lonely", 2)
	s.join = []string{strings.TrimPrefix(other.URL, "http://"), strings.TrimPrefix(missing.URL, "http://")}
	s.start()
	eventually(t, 20*time.Second, "the join errors in the log", func() error {
		out := s.output()
		for _, addr := range s.join {
			if !strings.Contains(out, addr+": not a drover server") {
				return errors.New("no 'not a drover server' error for " + addr)
			}
		}
		return nil
	})
	// It did not bootstrap a cluster on its own.
	l, err := s.client().Status().Leader(ctx(t))
	if err != nil || l != "" {
		t.Fatalf("leader = (%q, %v), want none", l, err)
	}
	if strings.Contains(s.output(), "bootstrapped the cluster") {
		t.Fatal("a lone server bootstrapped")
	}
}
