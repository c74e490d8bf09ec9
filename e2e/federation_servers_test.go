package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/loopback"
)

// startRegionServers runs n servers of region from config files (with the
// federation's join token), without clients, and returns them.
func startRegionServers(t *testing.T, region string, n int) []*agentProc {
	t.Helper()
	dir := t.TempDir()
	type srv struct{ name, http, raft string }
	servers := make([]srv, n)
	var joins []string
	for i := range servers {
		servers[i] = srv{fmt.Sprintf("%s-s%d", region, i+1), loopback.Addr(t), loopback.Addr(t)}
		joins = append(joins, fmt.Sprintf("%q", servers[i].http))
	}
	procs := make([]*agentProc, n)
	for i, s := range servers {
		cfg := filepath.Join(dir, s.name+".hcl")
		writeFile(t, cfg, fmt.Sprintf(`
name      = %q
region    = %q
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "debug"
ports {
  http = %s
  raft = %s
}
server {
  enabled          = true
  bootstrap_expect = %d
  retry_join       = [%s]
  join_token       = %q
}
`, s.name, region, filepath.Join(dir, s.name), port(s.http), port(s.raft), n, strings.Join(joins, ", "), fedJoinToken))
		procs[i] = startAgentProc(t, s.name, s.http, "-config", cfg)
	}
	return procs
}

// regionLeader returns the server of procs that leads their region.
func regionLeader(t *testing.T, procs []*agentProc) *agentProc {
	t.Helper()
	var leader *agentProc
	eventually(t, 30*time.Second, "a leader", func() error {
		for _, p := range procs {
			select {
			case <-p.done:
				continue
			default:
			}
			addr, err := p.client().Status().Leader(ctx(t))
			if err != nil || addr == "" {
				continue
			}
			for _, q := range procs {
				self, err := q.client().Agent().Self(ctx(t))
				if err == nil && self.Config.Addresses.Raft == addr {
					leader = q
					return nil
				}
			}
		}
		return fmt.Errorf("no leader known")
	})
	return leader
}

// Three servers of region east and a dev agent of region west, federated
// by one `server join` on a follower of east:
//
//   - every server of east learns west through its own region's
//     exchange, and lists both regions;
//   - a job of west registered through an east follower runs in west;
//   - a job of east registered through west reaches east's leader
//     (forwarded to east, then by the follower it reached to its leader);
//   - with east's leader killed, west's requests for east are served by
//     the next leader.
func TestFederationThreeServersAndADevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four agent processes")
	}
	east := startRegionServers(t, "east", 3)
	west := startRegionDevAgent(t, "west", "", "")
	leader := regionLeader(t, east)
	var follower *agentProc
	for _, p := range east {
		if p != leader {
			follower = p
			break
		}
	}
	west.waitNodeReady(1)

	out, err := west.cli(t, "server", "join", follower.httpAddr)
	if err != nil || !strings.Contains(out, "Joined 1 servers successfully") {
		t.Fatalf("server join: %v\n%s", err, out)
	}
	for _, p := range append(slices.Clone(east), west) {
		eventually(t, 20*time.Second, p.name+" listing both regions", func() error {
			got, err := regionsOf(t, p.client())
			if err != nil {
				return err
			}
			if !slices.Equal(got, []string{"east", "west"}) {
				return fmt.Errorf("regions %v", got)
			}
			return nil
		})
	}

	// West's job through an east follower.
	job := parseJob(t, "testdata/echo.hcl")
	job.ID, job.Name, job.Region = "to-west", "to-west", "west"
	registerJob(t, follower.client(), job)
	var allocID string
	eventually(t, 30*time.Second, "the job running in west", func() error {
		run := runningAllocs(allocsOf(t, west.client(), job.ID), 0)
		if len(run) != 1 {
			return fmt.Errorf("%d running", len(run))
		}
		allocID = run[0]
		return nil
	})
	t.Cleanup(func() { killAllocProcs(allocID) })

	// East's job through west: stored by east's leader (east has no
	// client, so it waits for one).
	eastJob := parseJob(t, "testdata/echo.hcl")
	eastJob.ID, eastJob.Name, eastJob.Region = "to-east", "to-east", "east"
	registerJob(t, west.client(), eastJob)
	for _, p := range east {
		eventually(t, 10*time.Second, "east's job on "+p.name, func() error {
			code, body, err := rawGet(t, p, "/v1/job/to-east?stale", "")
			if err != nil || code != http.StatusOK {
				return fmt.Errorf("%d %v %s", code, err, body)
			}
			return nil
		})
	}
	if code, _, _ := rawGet(t, west, "/v1/job/to-east", ""); code != http.StatusNotFound {
		t.Fatalf("west holds east's job: %d", code)
	}

	// East's leader killed: west reaches the next one.
	_ = leader.cmd.Process.Kill()
	<-leader.done
	start := time.Now()
	eventually(t, 30*time.Second, "east's job read through west after the leader died", func() error {
		code, body, err := rawGet(t, west, "/v1/job/to-east?region=east", "")
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("%d %v %s", code, err, body)
		}
		return nil
	})
	t.Logf("east's job read through west %s after east's leader was killed", time.Since(start).Round(time.Millisecond))
}
