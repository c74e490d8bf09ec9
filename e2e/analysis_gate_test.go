package e2e

// Rollouts gated by analysis runs (website/rollouts.md, "Analysis runs"),
// end to end: a dev agent or three servers as real processes, raw_exec
// tasks, and Debian's prometheus (internal/promtest) scraping an exporter
// whose error ratio the test sets for each job version. The queries use
// ${job.name} and ${job.version}, as a job's would.

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/promtest"
	"github.com/droverhq/drover/structs"
)

// errorRatio is the exporter's gauge; the tests set it per job and version.
const errorRatio = "app_error_ratio"

// ratioQuery is the analyses' query: the gauge of the version rolled out.
const ratioQuery = `max(app_error_ratio{job=\"${job.name}\",version=\"${job.version}\"})`

// promEnv is a Prometheus scraping an exporter the test controls.
type promEnv struct {
	prom *promtest.Server
	exp  *promtest.Exporter
}

// startProm starts the exporter and a Prometheus that scrapes it every
// second (skipping the test without prometheus, unless
// DROVER_REQUIRE_PROMETHEUS=1).
func startProm(t testing.TB) *promEnv {
	t.Helper()
	promtest.Binary(t)
	exp := promtest.NewExporter(t)
	exp.Set("promtest_up", nil, 1)
	prom := promtest.Start(t, exp.Target())
	return &promEnv{prom: prom, exp: exp}
}

// set sets job's error ratio at version and waits until Prometheus has
// scraped that value.
func (e *promEnv) set(t testing.TB, job string, version uint64, v float64) {
	t.Helper()
	e.exp.Set(errorRatio, map[string]string{"job": job, "version": fmt.Sprint(version)}, v)
	e.prom.WaitFor(fmt.Sprintf(`%s{job=%q,version="%d"} == %g`, errorRatio, job, version, v), 20*time.Second)
}

// analysisAgent starts a dev agent whose servers query the environment's
// Prometheus by default (analysis { prometheus_address }).
func analysisAgent(t testing.TB, e *promEnv) *agentProc {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "analysis.hcl")
	writeConfig(t, cfg, fmt.Sprintf("analysis {\n  prometheus_address = %q\n}\n", e.prom.Address()))
	return startDevAgent(t, "-config", cfg)
}

// analysisGateCheck skips in -short: real processes and a Prometheus.
func analysisGateCheck(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a dev agent, real processes and prometheus")
	}
}

// analysisBlock is an `analysis "errors"` block with the given lines.
func analysisBlock(lines ...string) string {
	var b strings.Builder
	b.WriteString("      analysis \"errors\" {\n")
	b.WriteString("        query    = \"" + ratioQuery + "\"\n")
	for _, l := range lines {
		b.WriteString("        " + l + "\n")
	}
	b.WriteString("      }\n")
	return b.String()
}

// gateUpdate is an update block body: max_parallel, the given lines,
// an analysis block, then fastUpdate's health settings.
func gateUpdate(extra []string, analysis ...string) string {
	var b strings.Builder
	for _, l := range extra {
		b.WriteString("      " + l + "\n")
	}
	return b.String() + analysisBlock(analysis...) + fastUpdate
}

// runsOf returns the group web's runs of the deployment, by batch for
// each_batch runs.
func runsOf(t testing.TB, d *structs.Deployment) []*structs.AnalysisRun {
	t.Helper()
	runs := append([]*structs.AnalysisRun(nil), webState(t, d).Analyses...)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Batch < runs[j].Batch })
	return runs
}

// waitRun waits until the deployment has a run for which ok holds, and
// returns the deployment.
func waitRun(t testing.TB, c *apiclient.Client, id, what string, limit time.Duration, ok func(*structs.AnalysisRun) bool) *structs.Deployment {
	t.Helper()
	return waitDeploymentByID(t, c, id, what, limit, func(d *structs.Deployment) error {
		if s := d.TaskGroups["web"]; s != nil {
			for _, r := range s.Analyses {
				if ok(r) {
					return nil
				}
			}
			return fmt.Errorf("runs %s", jsonString(s.Analyses))
		}
		return fmt.Errorf("no group web")
	})
}

// newAllocs returns the job's allocs of version, oldest first.
func newAllocs(t testing.TB, c *apiclient.Client, jobID string, version uint64) []*structs.AllocationListStub {
	t.Helper()
	var out []*structs.AllocationListStub
	for _, a := range allocsOf(t, c, jobID) {
		if a.JobVersion == version {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex < out[j].CreateIndex })
	return out
}

// rollV0 runs the job's first version to success, with a good metric: a
// first version runs only its background analyses.
func rollV0(t testing.TB, e *promEnv, c *apiclient.Client, s rolloutSpec) {
	t.Helper()
	e.set(t, s.ID, 0, 0.001)
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	d := waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	for _, r := range webState(t, d).Analyses {
		if r.When != structs.AnalysisWhenBackground {
			t.Fatalf("the first version ran a %s analysis: %s", r.When, jsonString(r))
		}
	}
}

// gateEnv starts Prometheus and a dev agent whose analyses read it; the
// test runs in parallel with the others.
func gateEnv(t *testing.T) (*promEnv, *agentProc, *apiclient.Client) {
	t.Helper()
	analysisGateCheck(t)
	t.Parallel()
	e := startProm(t)
	p := analysisAgent(t, e)
	return e, p, p.client()
}

// rollV1 rolls the job's first version out (rollV0), sets the second's
// error rate, runs it (s.Version "2") and returns its running deployment.
func rollV1(t *testing.T, e *promEnv, c *apiclient.Client, s *rolloutSpec, rate float64) *structs.Deployment {
	t.Helper()
	rollV0(t, e, c, *s)
	e.set(t, s.ID, 1, rate)
	s.Version = "2"
	s.run(t, c)
	return waitRollout(t, c, s.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)
}

// TestAnalysisGateEachBatchGood: with a good metric a 4-batch rollout ends
// successful with one successful each_batch run per batch; each batch's
// alloc is placed only after the previous batch's run succeeded, and each
// run starts only after its batch's alloc was placed.
func TestAnalysisGateEachBatchGood(t *testing.T) {
	e, p, c := gateEnv(t)
	s := rolloutSpec{ID: "an-good", Count: 4, Version: "1",
		Update: gateUpdate([]string{"max_parallel = 1"}, `success  = "result < 0.01"`, `failure  = "result >= 0.05"`, `interval = "1s"`)}
	rollV0(t, e, c, s)
	e.set(t, s.ID, 1, 0.001)
	s.Version = "2"

	// The plan names the analysis that gates after each batch.
	file := filepath.Join(t.TempDir(), "an-good.hcl")
	writeConfig(t, file, s.hcl())
	out, _ := p.cli(t, "job", "plan", file)
	rows := regexp.MustCompile(`(?m)^web\s+\d\s+-\s+web\[\d\]\s+false\s+-\s+errors$`).FindAllString(out, -1)
	if !regexp.MustCompile(`(?m)Pause After\s+Analysis$`).MatchString(out) || len(rows) != 4 {
		t.Errorf("plan without the gating analyses (want 4 rows naming errors):\n%s", out)
	}

	s.run(t, c)
	d := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)

	runs := runsOf(t, d)
	if len(runs) != 4 {
		t.Fatalf("%d runs, want one per batch (4): %s", len(runs), jsonString(runs))
	}
	allocs := newAllocs(t, c, s.ID, 1)
	if len(allocs) != 4 {
		t.Fatalf("%d allocs of version 1, want 4", len(allocs))
	}
	for i, r := range runs {
		if r.Name != "errors" || r.When != structs.AnalysisWhenEachBatch || r.Batch != i+1 || r.Phase != structs.AnalysisPhaseSuccessful {
			t.Errorf("run %d: %s %s batch %d %s, want errors each_batch batch %d successful", i, r.Name, r.When, r.Batch, r.Phase, i+1)
		}
		if r.Successes != 1 || r.Failures+r.Inconclusives != 0 || len(r.Measurements) == 0 {
			t.Errorf("run %d: s/f/i %d/%d/%d, %d measurements; want one success", i, r.Successes, r.Failures, r.Inconclusives, len(r.Measurements))
			continue
		}
		last := r.Measurements[len(r.Measurements)-1]
		if last.Outcome != structs.AnalysisOutcomeSuccess || last.Result == nil || *last.Result != 0.001 {
			t.Errorf("run %d: last measurement %s", i, jsonString(last))
		}
		placed := time.Unix(0, allocs[i].CreateTime)
		if r.StartedAt.Before(placed) {
			t.Errorf("run of batch %d started at %s, before its alloc %s was placed at %s", i+1, r.StartedAt, allocs[i].Name, placed)
		}
		if i+1 < len(allocs) {
			next := time.Unix(0, allocs[i+1].CreateTime)
			if next.Before(last.At) {
				t.Errorf("batch %d placed at %s, before batch %d's run succeeded at %s", i+2, next, i+1, last.At)
			}
		}
	}
	if n := countAllocs(allocsOf(t, c, s.ID), 1, running); n != 4 {
		t.Errorf("%d allocs of version 1 running, want 4", n)
	}
}

// TestAnalysisGateBadMetricReverts: the metric turns bad after the first
// batch's run succeeded; a later run fails, nothing is placed past it, the
// deployment fails (`analysis "errors" failed: …`) and auto_revert
// restores the stable version, whose deployment runs no analysis.
func TestAnalysisGateBadMetricReverts(t *testing.T) {
	e, _, c := gateEnv(t)
	s := rolloutSpec{ID: "an-bad", Count: 4, Version: "1",
		Update: gateUpdate([]string{"max_parallel = 1", "auto_revert = true"},
			`success  = "result < 0.01"`, `failure  = "result >= 0.05"`, `interval = "1s"`, `count    = 2`)}
	dep := rollV1(t, e, c, &s, 0.001)
	waitRun(t, c, dep.ID, "batch 1's run successful", 30*time.Second, func(r *structs.AnalysisRun) bool {
		return r.Batch == 1 && r.Phase == structs.AnalysisPhaseSuccessful
	})
	e.set(t, s.ID, 1, 0.07)

	d := versionDeployment(t, c, s.ID, 1, structs.DeploymentStatusFailed, 60*time.Second)
	if !strings.HasPrefix(d.StatusDescription, `analysis "errors" failed: `) ||
		!strings.Contains(d.StatusDescription, "result 0.07") || !strings.Contains(d.StatusDescription, "failure: result >= 0.05") {
		t.Errorf("failed deployment says %q", d.StatusDescription)
	}
	var failed *structs.AnalysisRun
	for _, r := range runsOf(t, d) {
		if r.Phase == structs.AnalysisPhaseFailed {
			failed = r
		}
	}
	if failed == nil || failed.Batch < 2 {
		t.Fatalf("no failed run after batch 1: %s", jsonString(runsOf(t, d)))
	}
	if n := len(newAllocs(t, c, s.ID, 1)); n != failed.Batch {
		t.Errorf("%d allocs of version 1 placed, want %d: nothing past the failed run of batch %d", n, failed.Batch, failed.Batch)
	}
	rev := waitRollout(t, c, s.ID, 2, structs.DeploymentStatusSuccessful, 60*time.Second)
	if n := len(webState(t, rev).Analyses); n != 0 {
		t.Errorf("the revert's deployment ran %d analyses, want none", n)
	}
	job, _, err := c.Jobs().Info(ctx(t), s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if job.TaskGroups[0].Tasks[0].Env["VERSION"] != "1" {
		t.Errorf("after the revert the job runs VERSION=%s, want the stable 1", job.TaskGroups[0].Tasks[0].Env["VERSION"])
	}
	if n := countAllocs(allocsOf(t, c, s.ID), 2, running); n != 4 {
		t.Errorf("%d allocs of the reverted version running, want 4", n)
	}
}

// TestAnalysisGatePrometheusOutagePauses: Prometheus stopped mid-rollout
// makes a run's measurements errors; past error_limit the run is
// inconclusive and the deployment pauses (never fails, never reverts);
// once Prometheus is back, `deployment resume` accepts the run and the
// rollout goes on to success with the next batches' runs measured again.
func TestAnalysisGatePrometheusOutagePauses(t *testing.T) {
	e, p, c := gateEnv(t)
	s := rolloutSpec{ID: "an-outage", Count: 4, Version: "1",
		Update: gateUpdate([]string{"max_parallel = 1", "auto_revert = true"},
			`success     = "result < 0.01"`, `interval    = "1s"`, `error_limit = 1`)}
	dep := rollV1(t, e, c, &s, 0.001)
	waitRun(t, c, dep.ID, "batch 1's run successful", 30*time.Second, func(r *structs.AnalysisRun) bool {
		return r.Batch == 1 && r.Phase == structs.AnalysisPhaseSuccessful
	})
	e.prom.Stop()

	d := waitDeploymentByID(t, c, dep.ID, "paused by an inconclusive run", 40*time.Second, func(d *structs.Deployment) error {
		if d.Status != structs.DeploymentStatusPaused || !strings.HasPrefix(d.StatusDescription, `analysis "errors" inconclusive`) {
			return fmt.Errorf("not paused by the analysis")
		}
		return nil
	})
	var stuck *structs.AnalysisRun
	for _, r := range runsOf(t, d) {
		if r.Phase == structs.AnalysisPhaseInconclusive {
			stuck = r
		}
	}
	if stuck == nil || stuck.Errors != 2 || len(stuck.Measurements) < 2 {
		t.Fatalf("want an inconclusive run after 2 consecutive errors: %s", jsonString(runsOf(t, d)))
	}
	for _, m := range stuck.Measurements[len(stuck.Measurements)-2:] {
		if m.Outcome != structs.AnalysisOutcomeError || m.Error == "" || m.Result != nil {
			t.Errorf("an outage's measurement: %s, want an error with its message", jsonString(m))
		}
	}
	holdStill(t, c, s.ID, 1, dep.ID, 2*time.Second)
	if n := len(newAllocs(t, c, s.ID, 1)); n != stuck.Batch {
		t.Errorf("%d allocs of version 1 while paused after batch %d's run", n, stuck.Batch)
	}

	e.prom.Restart()
	e.set(t, s.ID, 1, 0.001)
	if _, err := p.cli(t, "deployment", "resume", "-detach", dep.ID); err != nil {
		t.Fatalf("resume: %v", err)
	}
	d = waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	runs := runsOf(t, d)
	for _, r := range runs {
		want := structs.AnalysisPhaseSuccessful
		if r.Batch == stuck.Batch {
			want = structs.AnalysisPhaseAccepted
		}
		if r.Phase != want {
			t.Errorf("run of batch %d: %s, want %s", r.Batch, r.Phase, want)
		}
	}
	if len(runs) != 4 {
		t.Errorf("%d runs, want 4: %s", len(runs), jsonString(runs))
	}
	if n := countAllocs(allocsOf(t, c, s.ID), 1, running); n != 4 {
		t.Errorf("%d allocs of version 1 running, want 4", n)
	}
}

// TestAnalysisGateCanaryHoldsAutoPromote: a canary analysis whose query
// gives the error ratio only while it is under 1% (PromQL's comparison
// drops the sample otherwise: an empty result, an error measurement, which
// does not count towards count) keeps its run running while the metric is
// bad: auto_promote waits and no old alloc is replaced. Once the metric is
// good the run succeeds and auto_promote promotes at that moment.
func TestAnalysisGateCanaryHoldsAutoPromote(t *testing.T) {
	e, _, c := gateEnv(t)
	query := strings.Replace(ratioQuery, `})`, `}) < 0.01`, 1)
	upd := "      max_parallel = 1\n      canary = 1\n      auto_promote = true\n" +
		"      analysis \"errors\" {\n        query       = \"" + query + "\"\n        success     = \"result < 0.01\"\n" +
		"        when        = \"canary\"\n        interval    = \"1s\"\n        error_limit = 60\n      }\n" + fastUpdate
	s := rolloutSpec{ID: "an-canary", Count: 2, Version: "1", Update: upd}
	dep := rollV1(t, e, c, &s, 0.2)
	d := waitRun(t, c, dep.ID, "the canary run measuring the bad metric", 30*time.Second, func(r *structs.AnalysisRun) bool {
		return r.When == structs.AnalysisWhenCanary && r.Phase == structs.AnalysisPhaseRunning && r.Errors >= 3
	})
	// Held: three measurements in, not promoted, one canary, the old
	// allocs in place.
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		d = deploymentByID(t, c, dep.ID)
		if st := webState(t, d); st.Promoted || d.Status != structs.DeploymentStatusRunning {
			t.Fatalf("promoted or ended while the metric is bad: %s %q promoted=%v", d.Status, d.StatusDescription, st.Promoted)
		}
		if n := len(newAllocs(t, c, s.ID, 1)); n != 1 {
			t.Fatalf("%d allocs of version 1 while the canary run holds, want the canary", n)
		}
		if n := countAllocs(allocsOf(t, c, s.ID), 0, running); n != 2 {
			t.Fatalf("%d old allocs running while the canary run holds, want 2", n)
		}
	}
	run := runsOf(t, d)[0]
	if m := run.Measurements[len(run.Measurements)-1]; m.Outcome != structs.AnalysisOutcomeError || !strings.Contains(strings.ToLower(m.Error), "empty") {
		t.Errorf("a bad value's measurement: %s, want an empty-result error", jsonString(m))
	}

	e.set(t, s.ID, 1, 0.001)
	d = waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	st := webState(t, d)
	if !st.Promoted || len(st.Analyses) != 1 || st.Analyses[0].Phase != structs.AnalysisPhaseSuccessful || st.Analyses[0].Successes != 1 {
		t.Errorf("promoted=%v runs %s; want promoted after one successful canary run", st.Promoted, jsonString(st.Analyses))
	}
	if n := countAllocs(allocsOf(t, c, s.ID), 1, running); n != 2 {
		t.Errorf("%d allocs of version 1 running, want 2", n)
	}
}

// TestAnalysisGateBackgroundFails: a background analysis measures from the
// first healthy new alloc without holding any batch; when the metric turns
// bad between batches the deployment fails at once, before its last batch.
func TestAnalysisGateBackgroundFails(t *testing.T) {
	e, _, c := gateEnv(t)
	upd := "      max_parallel = 1\n" + analysisBlock(`success  = "result < 0.01"`, `failure  = "result >= 0.05"`,
		`when     = "background"`, `interval = "1s"`) + strings.Replace(fastUpdate, `"1s"`, `"3s"`, 1)
	s := rolloutSpec{ID: "an-bg", Count: 4, Version: "1", Update: upd}
	dep := rollV1(t, e, c, &s, 0.001)
	waitRun(t, c, dep.ID, "the background run measured", 30*time.Second, func(r *structs.AnalysisRun) bool {
		return r.When == structs.AnalysisWhenBackground && r.Successes >= 1
	})
	if n := len(newAllocs(t, c, s.ID, 1)); n >= 4 {
		t.Fatalf("all %d batches placed before the metric turned bad: the test needs a rollout still in progress", n)
	}
	e.set(t, s.ID, 1, 0.09)
	d := versionDeployment(t, c, s.ID, 1, structs.DeploymentStatusFailed, 30*time.Second)
	if !strings.HasPrefix(d.StatusDescription, `analysis "errors" failed: `) || !strings.Contains(d.StatusDescription, "result 0.09") {
		t.Errorf("failed deployment says %q", d.StatusDescription)
	}
	runs := runsOf(t, d)
	if len(runs) != 1 || runs[0].When != structs.AnalysisWhenBackground || runs[0].Phase != structs.AnalysisPhaseFailed || runs[0].Successes < 1 {
		t.Errorf("runs %s; want one background run, failed after its successes", jsonString(runs))
	}
	if n := countAllocs(allocsOf(t, c, s.ID), 1, healthy); n >= 4 {
		t.Errorf("%d healthy allocs of version 1: the rollout finished its batches before failing", n)
	}
}

// TestAnalysisGateValidation: the binary refuses each invalid analysis
// block in `job validate` and `job run` with a non-zero exit and an
// error naming file:line and the field (each rule has its unit test in
// jobspec; this checks the path through the CLI).
func TestAnalysisGateValidation(t *testing.T) {
	analysisGateCheck(t)
	t.Parallel()
	p := startDevAgent(t)
	dir := t.TempDir()
	good := []string{`query = "up"`, `success = "result == 1"`}
	cases := []struct {
		name  string
		lines []string
		canary,
		typ string
		line  int
		field string
		msg   string
	}{
		{name: "no query", lines: []string{`success = "result < 1"`}, line: 5, field: "update.analysis.errors", msg: `needs a query`},
		{name: "no condition", lines: []string{`query = "up"`}, line: 5, field: "update.analysis.errors", msg: `needs success or failure`},
		{name: "condition names x", lines: append(good[:1:1], `failure = "x > 1"`), line: 7, field: "update.analysis.errors.failure", msg: `names "x"`},
		{name: "condition does not parse", lines: append(good[:1:1], `success = "result <"`), line: 7, field: "update.analysis.errors.success", msg: "does not parse"},
		{name: "provider", lines: append(good, `provider = "datadog"`), line: 8, field: "update.analysis.errors.provider", msg: `must be prometheus`},
		{name: "when", lines: append(good, `when = "always"`), line: 8, field: "update.analysis.errors.when", msg: `must be canary, each_batch or background`},
		{name: "interval", lines: append(good, `interval = "500ms"`), line: 8, field: "update.analysis.errors.interval", msg: "must be at least 1s"},
		{name: "count", lines: append(good, `count = 0`), line: 8, field: "update.analysis.errors.count", msg: "must be at least 1"},
		{name: "limit", lines: append(good, `failure_limit = -1`), line: 8, field: "update.analysis.errors.failure_limit", msg: "must not be negative"},
		{name: "canary without canary", lines: append(good, `when = "canary"`), line: 8, field: "update.analysis.errors.when", msg: "needs canary > 0"},
		{name: "address", lines: append(good, `address = "127.0.0.1:9090"`), line: 8, field: "update.analysis.errors.address", msg: "must be an http or https URL"},
		{name: "same name twice", lines: good, line: 9, field: "update.analysis.errors", msg: `twice`},
		{name: "batch job", lines: good, typ: "batch", line: 4, field: "update", msg: "not allowed for batch jobs"},
		// The servers' check: `job validate` reads the file alone, `job
		// run` is refused by the servers (400), naming both addresses.
		{name: "no address anywhere", lines: good, line: 0, field: "Job.TaskGroups[0].Update.Analyses[0].Address", msg: "the servers have no analysis { prometheus_address }"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			typ := tc.typ
			if typ == "" {
				typ = "service"
			}
			var b strings.Builder
			fmt.Fprintf(&b, "job \"v\" {\n  type = %q\n  group \"web\" {\n    update {\n      analysis \"errors\" {\n", typ)
			for _, l := range tc.lines {
				b.WriteString("        " + l + "\n")
			}
			b.WriteString("      }\n")
			if tc.name == "same name twice" {
				b.WriteString("      analysis \"errors\" {\n        query = \"up\"\n        success = \"result == 1\"\n      }\n")
			}
			b.WriteString("    }\n    task \"t\" {\n      driver = \"raw_exec\"\n      config {\n        command = \"/bin/true\"\n      }\n    }\n  }\n}\n")
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".hcl")
			writeFile(t, file, b.String())
			for _, cmd := range []string{"validate", "run"} {
				if tc.line == 0 && cmd == "validate" {
					continue
				}
				out, err := p.cli(t, "job", cmd, file)
				var ee *exec.ExitError
				if err == nil || !asExit(err, &ee) || ee.ExitCode() == 0 {
					t.Errorf("job %s: exit %v, want a non-zero exit\n%s", cmd, err, out)
					continue
				}
				loc := fmt.Sprintf("%s:%d", filepath.Base(file), tc.line)
				if tc.line == 0 {
					loc = ""
				}
				if !strings.Contains(out, loc) || !strings.Contains(out, tc.field) || !strings.Contains(out, tc.msg) {
					t.Errorf("job %s says:\n%s\nwant %q, %q and %q", cmd, out, loc, tc.field, tc.msg)
				}
			}
		})
	}
}

// asExit reports whether err is a process's exit status.
func asExit(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

// TestAnalysisGateLeaderKilledDuringRun: three servers and a client as
// real processes; the leader is SIGKILLed after the first measurement of
// an each_batch run. The new leader continues the same run: it ends with
// exactly count measurements, spaced at least interval apart (none taken
// twice, none lost), and the rollout finishes with one run per batch.
func TestAnalysisGateLeaderKilledDuringRun(t *testing.T) {
	chaosCheck(t)
	e := startProm(t)
	c := startChaosCluster(t)
	s := rolloutSpec{ID: "an-failover", Count: 2, Version: "1",
		Update: gateUpdate([]string{"max_parallel = 1"}, fmt.Sprintf("address  = %q", e.prom.Address()),
			`success  = "result < 0.01"`, `failure  = "result >= 0.05"`, `interval = "2s"`, `count    = 4`)}
	stopJobProcs(t, c.api(), s.ID)
	s.run(t, c.api())
	waitRollout(t, c.api(), s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	e.set(t, s.ID, 1, 0.001)
	s.Version = "2"
	s.run(t, c.api())
	dep := waitRollout(t, c.api(), s.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)
	waitRun(t, c.api(), dep.ID, "batch 1's run measured once", 30*time.Second, func(r *structs.AnalysisRun) bool {
		return r.Batch == 1 && r.Phase == structs.AnalysisPhaseRunning && len(r.Measurements) == 1
	})
	killed := c.killLeader()
	leader := c.waitLeader(c.up())
	if leader == killed {
		t.Fatalf("%s still leads after SIGKILL", killed.name)
	}
	t.Logf("killed %s during the run; %s leads", killed.name, leader.name)

	d := waitRollout(t, c.api(), s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	runs := runsOf(t, d)
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2: %s", len(runs), jsonString(runs))
	}
	for _, r := range runs {
		if r.Phase != structs.AnalysisPhaseSuccessful || r.Successes != 4 || len(r.Measurements) != 4 {
			t.Errorf("run of batch %d: %s with %d successes and %d measurements, want successful with exactly 4",
				r.Batch, r.Phase, r.Successes, len(r.Measurements))
			continue
		}
		for i := 1; i < len(r.Measurements); i++ {
			if gap := r.Measurements[i].At.Sub(r.Measurements[i-1].At); gap < 2*time.Second {
				t.Errorf("run of batch %d: measurements %d and %d %s apart, under the 2s interval", r.Batch, i, i+1, gap)
			}
		}
	}
	if n := countAllocs(allocsOf(t, c.api(), s.ID), 1, running); n != 2 {
		t.Errorf("%d allocs of version 1 running, want 2", n)
	}
}
