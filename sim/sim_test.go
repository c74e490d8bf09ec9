package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBar(t *testing.T) {
	cases := []struct {
		width, done, total int
		want               string
	}{
		{10, 0, 100, "[----------]   0%"},
		{10, 50, 100, "[#####-----]  50%"},
		{10, 100, 100, "[##########] 100%"},
		{10, 150, 100, "[##########] 100%"}, // clamped
		{10, -5, 100, "[----------]   0%"},
		{4, 1, 0, "[----]   0%"}, // no total
		{0, 1, 1, "[#] 100%"},    // width at least 1
	}
	for _, c := range cases {
		if got := Bar(c.width, c.done, c.total); got != c.want {
			t.Errorf("Bar(%d, %d, %d) = %q, want %q", c.width, c.done, c.total, got, c.want)
		}
	}
}

func TestProgressRedrawsOneLine(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b)
	p.Draw("register", 5, 10)
	p.Draw("go", 10, 10)
	p.Done()
	out := b.String()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("want one line ended once, got %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\r")
	if len(lines) != 3 || lines[0] != "" {
		t.Fatalf("want two redraws after carriage returns, got %q", lines)
	}
	if len(lines[2]) < len(lines[1]) {
		t.Errorf("a shorter line must be padded over the longer one: %q then %q", lines[1], lines[2])
	}
	var nilP *Progress
	nilP.Draw("x", 1, 1) // draws nothing, does not panic
	nilP.Done()
	if NewProgress(nil) != nil {
		t.Error("NewProgress(nil) should draw nothing")
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tdrover\nVmPeak:\t  9999 kB\nVmRSS:\t  123456 kB\nThreads: 3\n"
	got, err := parseVmRSS(strings.NewReader(status))
	if err != nil || got != 123456*1024 {
		t.Fatalf("got %d, %v", got, err)
	}
	for _, bad := range []string{"Name: x\n", "VmRSS: 12 MB\n", "VmRSS: x kB\n", "VmRSS: -1 kB\n"} {
		if _, err := parseVmRSS(strings.NewReader(bad)); !errors.Is(err, ErrNoRSS) {
			t.Errorf("%q: err = %v, want ErrNoRSS", bad, err)
		}
	}
	if rss, err := RSS(0); err != nil || rss <= 0 {
		t.Errorf("own RSS = %d, %v", rss, err)
	}
}

func TestLowerBoundAndPercentile(t *testing.T) {
	if got := lowerBound(10000, 500, time.Second); got != 20*time.Second {
		t.Errorf("lowerBound = %v, want 20s", got)
	}
	if got := lowerBound(1001, 500, time.Second); got != 3*time.Second {
		t.Errorf("lowerBound rounds up: %v, want 3s", got)
	}
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(lat, 0.5); p != 50*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(lat, 0.99); p != 99*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	if p := percentile(nil, 0.5); p != 0 {
		t.Errorf("empty p50 = %v", p)
	}
}

func TestJobSpecAPIJob(t *testing.T) {
	j := JobSpec{ID: "a", Count: 7, MaxParallel: 3, MinHealthyTime: 2 * time.Second, Version: "v9"}.APIJob()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID          string
		Constraints []struct{ LTarget, RTarget, Operand string }
		TaskGroups  []struct {
			Count  int
			Update struct {
				MaxParallel    int
				HealthCheck    string
				MinHealthyTime int64
			}
			Tasks []struct {
				Driver string
				Env    map[string]string
			}
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	g := got.TaskGroups[0]
	if got.ID != "a" || g.Count != 7 || g.Update.MaxParallel != 3 || g.Update.HealthCheck != "task_states" ||
		g.Update.MinHealthyTime != int64(2*time.Second) || g.Tasks[0].Driver != "mock" || g.Tasks[0].Env["SIM_VERSION"] != "v9" {
		t.Errorf("job = %s", b)
	}
	if len(got.Constraints) != 1 || got.Constraints[0].LTarget != "${meta.sim}" || got.Constraints[0].RTarget != "true" {
		t.Errorf("constraints = %+v", got.Constraints)
	}
	plain := JobSpec{ID: "b", Count: 1}.APIJob()
	if _, ok := plain["TaskGroups"].([]any)[0].(map[string]any)["Update"]; ok {
		t.Error("MaxParallel 0 should leave the update block out")
	}
}

func TestFleetConfigChecks(t *testing.T) {
	if _, err := NewFleet(FleetConfig{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("no servers: %v", err)
	}
	if _, err := NewFleet(FleetConfig{Servers: []string{"127.0.0.1:1"}, Nodes: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("negative nodes: %v", err)
	}
	f, err := NewFleet(FleetConfig{Servers: []string{"127.0.0.1:1"}, Nodes: 3, Zones: []string{"x", "y"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	c := f.agentConfig(3)
	if c.NodeName != "sim-3" || c.Meta["zone"] != "y" || c.Meta[MetaSim] != "true" || c.Datacenter != "dc1" ||
		len(c.Drivers) != 1 || c.Drivers[0].Name() != "mock" || c.ServerAPI == nil {
		t.Errorf("agent config = %+v", c)
	}
	if f.agentConfig(0).Drivers[0] != c.Drivers[0] {
		t.Error("nodes should share one mock driver")
	}
}

func TestBenchConfigChecks(t *testing.T) {
	for _, c := range []BenchConfig{
		{Scenario: "nope"},
		{Scenario: ScenarioFailover, Mode: ModeDev},
		{Scenario: ScenarioFailover, Servers: []string{"127.0.0.1:1"}},
	} {
		if _, err := c.withDefaults(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: err = %v, want ErrInvalidConfig", c, err)
		}
	}
	c, err := BenchConfig{Scenario: ScenarioRollout}.withDefaults()
	if err != nil || c.Nodes != 1000 || c.Count != 10000 || c.MaxParallel != 500 || c.Mode != ModeDev {
		t.Errorf("rollout defaults = %+v, %v", c, err)
	}
	c, err = BenchConfig{Scenario: ScenarioFailover}.withDefaults()
	if err != nil || c.Mode != ModeCluster3 {
		t.Errorf("failover defaults = %+v, %v", c, err)
	}
}

func TestResultJSONAndTable(t *testing.T) {
	r := &Result{Scenario: "place", Servers: "dev", Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Params: map[string]any{"nodes": 5}, Machine: Machine{Cores: 2, GoVersion: "go1", Build: "c5aabb9", CalibrationMS: 61.5}}
	r.Add("placements_per_s", 1234.5, "allocs/s", ">= 5000")
	r.Note("hello %d", 1)
	dir := t.TempDir()
	path, err := r.WriteJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "place-dev-20260102T030405Z.json" {
		t.Errorf("path = %s", path)
	}
	b, _ := os.ReadFile(path)
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || len(back.Figures) != 1 || back.Figures[0].Value != 1234.5 {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	var tb bytes.Buffer
	if err := r.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if back.Machine.Build != "c5aabb9" || back.Machine.CalibrationMS != 61.5 {
		t.Errorf("machine round trip: %+v", back.Machine)
	}
	for _, want := range []string{"placements_per_s", "1234.500", ">= 5000", "note: hello 1", "2 cores", "build c5aabb9", "calibration 61.500 ms"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tb.String())
		}
	}
	if v, ok := r.Figure("placements_per_s"); !ok || v != 1234.5 {
		t.Errorf("Figure = %v, %v", v, ok)
	}
}

// The calibration workload runs and takes some time; its figure is not
// held to any value (the machine decides it).
func TestCalibrate(t *testing.T) {
	ms := Calibrate()
	if ms <= 0 {
		t.Fatalf("Calibrate = %v ms", ms)
	}
	t.Logf("calibration: %v ms", ms)
}

func TestMemTotal(t *testing.T) {
	if got := memTotalMB("MemFree: 1 kB\nMemTotal:       24683656 kB\n"); got != 24105 {
		t.Errorf("memTotalMB = %d", got)
	}
	if ReadMachine().Cores < 1 {
		t.Error("no cores")
	}
}

// TestShortScenario runs the place and rollout scenarios at a small size
// against a server in this process, through the real HTTP API and client
// code. It asserts outcomes, not timings.
func TestShortScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, sc := range []BenchConfig{
		{Scenario: ScenarioPlace, Nodes: 200, Count: 2000},
		{Scenario: ScenarioRollout, Nodes: 50, Count: 200, MaxParallel: 50, MinHealthyTime: 100 * time.Millisecond},
		{Scenario: ScenarioChurn, Nodes: 50, Jobs: 20, Count: 10},
		{Scenario: ScenarioZones, Nodes: 60, Count: 120, MaxParallel: 20, Zones: 3, MinHealthyTime: 100 * time.Millisecond},
	} {
		t.Run(sc.Scenario, func(t *testing.T) {
			sc.Mode = ModeInProcess
			sc.Dir = t.TempDir()
			sc.Timeout = 2 * time.Minute
			res, err := RunBench(ctx, sc)
			if err != nil {
				t.Fatal(err)
			}
			var tb bytes.Buffer
			_ = res.WriteTable(&tb)
			t.Log("\n" + tb.String())
			want := []string{"time_to_all_placed_s", "placements_per_s", "sim_rss_per_node_kb"}
			if sc.Scenario == ScenarioChurn {
				want = []string{"time_to_all_running_s", "register_p50_ms", "register_p99_ms"}
			}
			if sc.Scenario == ScenarioZones {
				want = []string{"zones", "rollout_s", "lower_bound_s", "rollout_over_lower_bound"}
				if v, _ := res.Figure("zones"); v != 3 {
					t.Errorf("the rollout went through %v zones, want 3", v)
				}
			}
			if sc.Scenario == ScenarioRollout {
				want = []string{"rollout_s", "lower_bound_s", "rollout_over_lower_bound"}
				if runtime.GOOS == "linux" {
					want = append(want, "rollout_cpu_process_s", "rollout_cpu_min_s", "rollout_machine_busy_pct")
				}
			}
			for _, name := range want {
				if v, ok := res.Figure(name); !ok || v <= 0 {
					t.Errorf("figure %s = %v (present %v)", name, v, ok)
				}
			}
		})
	}
}

// The leader last seen is given only while its process runs.
func TestLastLeaderOnlyWhileItRuns(t *testing.T) {
	s := &Servers{}
	if got := s.LastLeader(); got != nil {
		t.Fatalf("no leader seen yet: got %s", got.Name)
	}
	p := &ServerProc{Name: "server-2", done: make(chan struct{})}
	s.lastLeader = p
	if got := s.LastLeader(); got != p {
		t.Fatalf("running leader: got %v", got)
	}
	close(p.done)
	if got := s.LastLeader(); got != nil {
		t.Fatalf("exited leader: got %s", got.Name)
	}
}

// A -dir holding an earlier run's servers is refused before any server
// starts (they would wait for peers at addresses no longer used).
func TestStartServersRefusesAnEarlierRunsDir(t *testing.T) {
	dir := t.TempDir()
	if err := noEarlierServers(dir); err != nil {
		t.Fatalf("an empty dir: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "server-2", "raft"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := StartServers(t.Context(), ServersConfig{Mode: ModeCluster3, Binary: "/nonexistent/drover", Dir: dir})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "server-2") {
		t.Fatalf("want the earlier run's dir refused, got %v", err)
	}
}

// The groups scenario's job splits its count over its groups, rolled one
// at a time in order (group_order), and its bound adds up each group's.
func TestJobSpecGroups(t *testing.T) {
	spec := JobSpec{ID: "g", Count: 23, MaxParallel: 5, MinHealthyTime: time.Second, Version: "1", Groups: 3}
	b, err := json.Marshal(spec.APIJob())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Update     struct{ GroupOrder []string }
		TaskGroups []struct {
			Name   string
			Count  int
			Update struct{ MaxParallel int }
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"g01", "g02", "g03"}
	if !slices.Equal(got.Update.GroupOrder, want) || len(got.TaskGroups) != 3 {
		t.Fatalf("job = %s", b)
	}
	total := 0
	for i, g := range got.TaskGroups {
		total += g.Count
		if g.Name != want[i] || g.Update.MaxParallel != 5 || g.Count < 7 || g.Count > 8 {
			t.Errorf("group %d = %+v", i, g)
		}
	}
	if total != 23 {
		t.Errorf("the groups count %d allocs, want 23", total)
	}
	// 8, 8 and 7 allocs at 5 at a time: 2 batches each.
	if lb := groupsBound(spec); lb != 6*time.Second {
		t.Errorf("bound %v, want 6s", lb)
	}
	if one := (JobSpec{Count: 4}); !slices.Equal(one.GroupNames(), []string{"g"}) || one.GroupCount(0) != 4 {
		t.Errorf("one group: %v %d", one.GroupNames(), one.GroupCount(0))
	}
}
