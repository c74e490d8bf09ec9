package robustness

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

var (
	// -soak.rollouts runs the long soak (make soak): that many rollouts
	// on a dev agent and on a three-server cluster, side by side.
	soakRollouts = flag.Int("soak.rollouts", 0, "run the soak with this many consecutive rollouts (0: the short form only)")
	soakGC       = flag.Duration("soak.gc", 10*time.Second, "the soak servers' eval_gc_threshold and deployment_gc_threshold")
	soakOut      = flag.String("soak.out", "", "write the soak's report (JSON) to this directory")
)

// soakJob is the job rolled out again and again: two allocs, one at a
// time, each healthy after 100ms of running.
func soakJob(t testing.TB, version int) *structs.Job {
	return parse(t, fmt.Sprintf(`job "soak" {
  update {
    max_parallel      = 1
    min_healthy_time  = "100ms"
    healthy_deadline  = "30s"
    progress_deadline = "2m"
  }
  group "g" {
    count = 2
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      env { VERSION = "%d" }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, version))
}

// soakRaft makes the Raft log's compaction come round within a soak: a
// snapshot every 1024 entries (checked every 2 minutes), 1024 left in the
// log; the defaults (8192, 10240) take some 900 rollouts to.
const soakRaft = "  raft_snapshot_threshold = 1024\n  raft_trailing_logs      = 1024"

// soakTarget is what a soak rolls out on: its servers' processes and
// data directories, and an address to send requests to.
type soakTarget struct {
	name     string
	api      *apiclient.Client
	pids     func() []int
	dataDirs func() []string
	logs     func() string
}

// sample is one reading of a soak: per server process (summed over the
// servers of a cluster: RSS, open files, goroutines) and of the state.
type sample struct {
	Rollout      int
	At           time.Duration
	RSSKB        int64
	OpenFiles    int
	Goroutines   int
	RaftDBBytes  int64 // raft.db, summed over the servers
	SnapshotsB   int64 // raft/snapshots, summed over the servers
	Deployments  int
	Evaluations  int
	Allocations  int
	JobVersions  int
	ReapedLogged int // "reaper: collected" lines in the logs so far
	// Idle: taken once the rollouts stopped and the reaper collected
	// what the threshold let go.
	Idle bool `json:",omitempty"`
}

func (s sample) String() string {
	idle := ""
	if s.Idle {
		idle = " (idle, collected)"
	}
	return fmt.Sprintf("rollout %d%s at %v: RSS %d MB, %d open files, %d goroutines, raft.db %.1f MB, snapshots %.1f MB; "+
		"%d deployments, %d evaluations, %d allocations, %d job versions stored; %d collections logged",
		s.Rollout, idle, s.At.Round(time.Second), s.RSSKB/1024, s.OpenFiles, s.Goroutines, float64(s.RaftDBBytes)/(1<<20), float64(s.SnapshotsB)/(1<<20),
		s.Deployments, s.Evaluations, s.Allocations, s.JobVersions, s.ReapedLogged)
}

func procRSS(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func procFDs(pid int) int {
	es, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(es)
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// goroutines reads nomad.runtime.num_goroutines from the agent's metrics.
func goroutines(ctx context.Context, api *apiclient.Client) int {
	var m struct {
		Gauges []struct {
			Name  string
			Value float64
		}
	}
	if _, err := api.Get(ctx, "/v1/metrics", nil, &m); err != nil {
		return -1
	}
	for _, g := range m.Gauges {
		if g.Name == "nomad.runtime.num_goroutines" {
			return int(g.Value)
		}
	}
	return -1
}

func (tg *soakTarget) sample(t testing.TB, rollout int, start time.Time, apis []*apiclient.Client, idle bool) sample {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := sample{Rollout: rollout, At: time.Since(start), Idle: idle}
	for _, pid := range tg.pids() {
		s.RSSKB += procRSS(pid)
		s.OpenFiles += procFDs(pid)
	}
	for _, a := range apis {
		n := goroutines(ctx, a)
		if n < 0 || s.Goroutines < 0 {
			s.Goroutines = -1 // not measured yet (the first interval)
			continue
		}
		s.Goroutines += n
	}
	for _, d := range tg.dataDirs() {
		s.RaftDBBytes += dirSize(filepath.Join(d, "raft", "raft.db"))
		s.SnapshotsB += dirSize(filepath.Join(d, "raft", "snapshots"))
	}
	var list []json.RawMessage
	if _, err := tg.api.Get(ctx, "/v1/deployments", nil, &list); err == nil {
		s.Deployments = len(list)
	}
	if _, err := tg.api.Get(ctx, "/v1/evaluations", nil, &list); err == nil {
		s.Evaluations = len(list)
	}
	if _, err := tg.api.Get(ctx, "/v1/allocations", nil, &list); err == nil {
		s.Allocations = len(list)
	}
	if vs, _, err := tg.api.Jobs().Versions(ctx, "soak", nil); err == nil {
		s.JobVersions = len(vs)
	}
	s.ReapedLogged = strings.Count(tg.logs(), "reaper: collected")
	t.Logf("%s: %s", tg.name, s)
	return s
}

// soak runs n consecutive rollouts of job soak on tg, each registered
// once the previous one's deployment is successful, and samples at the
// first rollout, every 100th and the last.
func soak(t *testing.T, tg *soakTarget, n int, apis []*apiclient.Client) []sample {
	ctx := context.Background()
	start := time.Now()
	var out []sample
	for v := 0; v < n; v++ {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := tg.api.Jobs().Register(rctx, soakJob(t, v))
		cancel()
		if err != nil {
			t.Fatalf("%s: registering version %d: %v", tg.name, v, err)
		}
		deadline := time.Now().Add(3 * time.Minute)
		for {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			d, _, err := tg.api.Jobs().LatestDeployment(rctx, "soak", nil)
			cancel()
			if err == nil && d != nil && d.JobVersion == uint64(v) && d.Status == structs.DeploymentStatusSuccessful {
				break
			}
			if err == nil && d != nil && d.JobVersion == uint64(v) && terminalStatus(d.Status) {
				t.Fatalf("%s: rollout %d ended %s: %s", tg.name, v+1, d.Status, d.StatusDescription)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: rollout %d did not finish within 3 minutes (last: %+v, %v)", tg.name, v+1, d, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if r := v + 1; r == 1 || r%100 == 0 || r == n {
			out = append(out, tg.sample(t, r, start, apis, false))
		}
	}
	return out
}

// devTarget starts a dev agent whose reaper collects after gc.
func devTarget(t *testing.T, gc time.Duration) (*soakTarget, []*apiclient.Client) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "soak.hcl")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf(`server {
  eval_gc_threshold       = %q
  deployment_gc_threshold = %q
%s
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`, gc, gc, soakRaft)), 0o644)
	tmp := filepath.Join(dir, "tmp")
	_ = os.MkdirAll(tmp, 0o755)
	httpAddr := loopback.Addr(t)
	logs := &syncBuffer{}
	cmd := exec.Command(droverBin, "agent", "-dev", "-http-addr", httpAddr, "-raft-addr", loopback.Addr(t), "-node", "dev", "-config", cfg)
	// The dev agent's data dir is a temporary directory: under tmp.
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "DROVER_ADDR=", "NOMAD_ADDR=")
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("dev agent's log:\n%s", tail(logs.String(), 60))
		}
	})
	api, _ := apiclient.New(httpAddr)
	waitFor(t, 60*time.Second, "the dev agent's client", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		var nodes []map[string]any
		_, err := api.Get(ctx, "/v1/nodes", nil, &nodes)
		return err == nil && len(nodes) == 1 && nodes[0]["Status"] == "ready"
	})
	return &soakTarget{
		name: "dev", api: api,
		pids: func() []int { return []int{cmd.Process.Pid} },
		dataDirs: func() []string {
			ds, _ := filepath.Glob(filepath.Join(tmp, "drover-dev-*"))
			return ds
		},
		logs: logs.String,
	}, []*apiclient.Client{api}
}

// clusterTarget starts three servers and a client (no faults) whose
// reaper collects after gc.
func clusterTarget(t *testing.T, gc time.Duration) (*soakTarget, []*apiclient.Client) {
	c := startCluster(t, false, fmt.Sprintf("  eval_gc_threshold       = %q\n  deployment_gc_threshold = %q\n%s", gc, gc, soakRaft))
	var apis []*apiclient.Client
	for _, s := range c.servers {
		apis = append(apis, s.api())
	}
	return &soakTarget{
		name: "cluster", api: c.servers[0].api(),
		pids: func() []int {
			var out []int
			for _, s := range c.servers {
				s.mu.Lock()
				out = append(out, s.cmd.Process.Pid)
				s.mu.Unlock()
			}
			return out
		},
		dataDirs: func() []string {
			var out []string
			for _, s := range c.servers {
				out = append(out, s.dataDir)
			}
			return out
		},
		logs: func() string {
			var b strings.Builder
			for _, s := range c.servers {
				b.WriteString(s.logs.String())
			}
			return b.String()
		},
	}, apis
}

func tail(s string, lines int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// waitCollected waits until the reaper has collected everything older
// than the threshold: one deployment (the current one), the job's two
// running allocations, and no evaluation.
func waitCollected(t *testing.T, tg *soakTarget, within time.Duration) {
	waitFor(t, within, tg.name+"'s reaper to collect the rollouts' history", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var deps, evals, allocs []json.RawMessage
		_, e1 := tg.api.Get(ctx, "/v1/deployments", nil, &deps)
		_, e2 := tg.api.Get(ctx, "/v1/evaluations", nil, &evals)
		_, e3 := tg.api.Get(ctx, "/v1/allocations", nil, &allocs)
		return e1 == nil && e2 == nil && e3 == nil && len(deps) == 1 && len(evals) == 0 && len(allocs) == 2
	})
}

// TestSoakShort is the soak's short form (make test): 10 rollouts on a
// dev agent whose reaper collects after 5 s; the job keeps its 6
// versions, and once the rollouts stop the reaper leaves the current
// deployment and the two running allocations only.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	tg, apis := devTarget(t, 5*time.Second)
	samples := soak(t, tg, 10, apis)
	last := samples[len(samples)-1]
	if last.JobVersions != 6 {
		t.Errorf("%d versions of the job stored after 10, want 6 (server.job_tracked_versions)", last.JobVersions)
	}
	waitCollected(t, tg, 60*time.Second)
	if n := strings.Count(tg.logs(), "reaper: collected"); n == 0 {
		t.Error("the reaper collected without logging it")
	}
}

// TestSoak is the long form (make soak): -soak.rollouts rollouts on a dev
// agent and on a three-server cluster side by side. At every sample from
// the 100th on, the stored deployments, evaluations and allocations are
// no more than the rollouts of one threshold (and the reaper's pass) hold,
// the versions no more than 6, and the goroutines and open files no more
// than at the 100th and a margin.
func TestSoak(t *testing.T) {
	if *soakRollouts == 0 {
		t.Skip("run with -soak.rollouts (make soak)")
	}
	var mu sync.Mutex
	report := map[string][]sample{}
	for _, name := range []string{"dev", "cluster"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var tg *soakTarget
			var apis []*apiclient.Client
			if name == "dev" {
				tg, apis = devTarget(t, *soakGC)
			} else {
				tg, apis = clusterTarget(t, *soakGC)
			}
			start := time.Now()
			samples := soak(t, tg, *soakRollouts, apis)
			mu.Lock()
			report[name] = samples
			mu.Unlock()
			checkBounded(t, samples, *soakGC)
			waitCollected(t, tg, *soakGC+2*time.Minute)
			final := tg.sample(t, *soakRollouts, start, apis, true)
			mu.Lock()
			report[name] = append(samples, final)
			mu.Unlock()
		})
	}
	t.Cleanup(func() {
		if *soakOut == "" {
			return
		}
		b, _ := json.MarshalIndent(map[string]any{
			"rollouts": *soakRollouts, "gc_threshold": soakGC.String(), "date": time.Now().UTC().Format(time.RFC3339),
			"samples": report, "note": "the last sample of each is taken once the rollouts stopped and the reaper collected what is older than the threshold",
		}, "", "  ")
		path := filepath.Join(*soakOut, fmt.Sprintf("soak-%d-%s.json", *soakRollouts, time.Now().UTC().Format("20060102T150405Z")))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Errorf("writing the report: %v", err)
		} else {
			t.Logf("report written to %s", path)
		}
	})
}

// checkBounded checks every sample from the 100th on: the stored
// deployments, evaluations and allocations are bounded by what the
// rollouts of one gc threshold (plus the reaper's pass and a margin)
// leave, whatever the number of rollouts; the job keeps its 6 versions;
// the goroutines and open files stay within a margin of the 100th's.
func checkBounded(t *testing.T, samples []sample, gc time.Duration) {
	var at100 *sample
	for i := range samples {
		if samples[i].Rollout == 100 {
			at100 = &samples[i]
		}
	}
	last := samples[len(samples)-1]
	if at100 == nil || last.Rollout <= 100 {
		return
	}
	perSec := float64(last.Rollout) / last.At.Seconds()
	window := int(perSec*(gc.Seconds()+10)) + 2 // rollouts whose history may still be kept
	for _, s := range samples {
		if s.Rollout < 100 {
			continue
		}
		check := func(what string, is, bound int) {
			if is > bound {
				t.Errorf("rollout %d: %d %s, more than the %d a %v threshold keeps at %.1f rollouts/s", s.Rollout, is, what, bound, gc, perSec)
			}
		}
		check("deployments", s.Deployments, window)
		check("evaluations", s.Evaluations, 4*window)
		check("allocations", s.Allocations, 3*window)
		check("job versions", s.JobVersions, 6)
		if s.Goroutines > at100.Goroutines+60 && at100.Goroutines >= 0 {
			t.Errorf("rollout %d: %d goroutines, %d at rollout 100", s.Rollout, s.Goroutines, at100.Goroutines)
		}
		if s.OpenFiles > at100.OpenFiles+20 {
			t.Errorf("rollout %d: %d open files, %d at rollout 100", s.Rollout, s.OpenFiles, at100.OpenFiles)
		}
	}
}
