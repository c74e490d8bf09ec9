package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/promtest"
	"github.com/droverhq/drover/structs"
)

// Rollouts gated by analyses against a real Prometheus (website/rollouts.md,
// "Analysis: metrics decide"): Debian's prometheus scrapes an exporter the
// test serves, whose error ratio per version the test sets.

// analysisRunsPending skips the tests that need the deployment watcher's
// analysis runs, which are built separately from the block and the
// measurement.
func analysisRunsPending(t *testing.T) {
	t.Helper()
	t.Skip("needs the deployment watcher's analysis runs (the leader's measurements), not in this branch yet")
}

// analysisEnv is a dev agent whose servers measure against a real
// Prometheus scraping an exporter of errors_ratio{job,version}.
type analysisEnv struct {
	agent *agentProc
	c     *apiclient.Client
	prom  *promtest.Server
	exp   *promtest.Exporter
}

func startAnalysisEnv(t *testing.T) *analysisEnv {
	t.Helper()
	exp := promtest.NewExporter(t)
	prom := promtest.Start(t, exp.Target())
	cfg := filepath.Join(t.TempDir(), "analysis.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("analysis {\n  prometheus_address = %q\n}\n", prom.Address())), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDevAgent(t, "-config", cfg)
	return &analysisEnv{agent: p, c: p.client(), prom: prom, exp: exp}
}

// setErrors sets the error ratio of a version of the job and waits until
// Prometheus has scraped it.
func (e *analysisEnv) setErrors(t *testing.T, job, version string, ratio float64) {
	t.Helper()
	e.exp.Set("errors_ratio", map[string]string{"job": job, "version": version}, ratio)
	q := fmt.Sprintf(`errors_ratio{job=%q,version=%q} == %g`, job, version, ratio)
	e.prom.WaitFor(q, 30*time.Second)
}

// analysisUpdate is an update block body rolling one alloc at a time with
// an analysis "errors" over the version's error ratio; each line of
// analysis sets one more field of it, or replaces one.
func analysisUpdate(extra string, analysis ...string) string {
	base := []string{
		`query    = "errors_ratio{job=\"${job.name}\",version=\"${job.version}\"}"`,
		`success  = "result < 0.01"`,
		`failure  = "result >= 0.05"`,
		`interval = "1s"`,
		`count    = 2`,
	}
	// A line of analysis replaces the base line of the same field.
	key := func(l string) string { return strings.Fields(l)[0] }
	var lines []string
	for _, b := range base {
		if !slices.ContainsFunc(analysis, func(a string) bool { return key(a) == key(b) }) {
			lines = append(lines, b)
		}
	}
	lines = append(lines, analysis...)
	return "      max_parallel     = 1\n      min_healthy_time = \"1s\"\n      health_check     = \"task_states\"\n" + extra +
		"      analysis \"errors\" {\n        " + strings.Join(lines, "\n        ") + "\n      }"
}

// Every validation error of the analysis block, located, from `drover
// job validate` and `drover job run`; a job without an address refused by
// servers without analysis { prometheus_address }, naming both.
func TestAnalysisValidationE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a dev agent")
	}
	p := startDevAgent(t)
	dir := t.TempDir()
	cases := []struct {
		name, update, want string
	}{
		{"no query", "      analysis \"errors\" {\n        success = \"result < 1\"\n      }", `update.analysis.errors analysis "errors" needs a query`},
		{"neither success nor failure", "      analysis \"errors\" {\n        query = \"up\"\n      }", `update.analysis.errors analysis "errors" needs success or failure`},
	}
	for _, c := range []struct{ name, line, want string }{
		{"success does not parse", `success = "result <"`, "update.analysis.errors.success does not parse"},
		{"names another variable", `failure = "errors > 1"`, `update.analysis.errors.failure names "errors"`},
		{"unknown provider", `provider = "datadog"`, `update.analysis.errors.provider must be prometheus (got "datadog")`},
		{"unknown when", `when = "always"`, `update.analysis.errors.when must be canary, each_batch or background`},
		{"interval under 1s", `interval = "100ms"`, "update.analysis.errors.interval must be at least 1s (got 100ms)"},
		{"count 0", `count = 0`, "update.analysis.errors.count must be at least 1 (got 0)"},
		{"negative limit", `error_limit = -1`, "update.analysis.errors.error_limit must not be negative (got -1)"},
		{"canary without canary", `when = "canary"`, `update.analysis.errors.when is "canary", which needs canary > 0`},
		{"address not a URL", `address = "prom:9090"`, "update.analysis.errors.address must be an http or https URL"},
	} {
		cases = append(cases, struct{ name, update, want string }{c.name, analysisUpdate("", c.line), c.want})
	}
	cases = append(cases, struct{ name, update, want string }{"the same name twice",
		analysisUpdate("") + "\n      analysis \"errors\" {\n        query = \"up\"\n        success = \"result == 1\"\n      }",
		`update.analysis.errors names analysis "errors" twice in one update block`})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := rolloutSpec{ID: "bad", Count: 2, Version: "1", Update: c.update}
			file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".hcl")
			if err := os.WriteFile(file, []byte(spec.hcl()), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, verb := range []string{"validate", "run"} {
				out, err := p.cli(t, "job", verb, file)
				if err == nil || !strings.Contains(out, c.want) || !strings.Contains(out, file+":") {
					t.Errorf("job %s: err %v, want %q at %s:LINE in\n%s", verb, err, c.want, file, out)
				}
			}
		})
	}

	// A batch job may have no update block, hence no analysis.
	batch := rolloutSpec{ID: "batch", Type: structs.JobTypeBatch, Count: 1, Version: "1", Update: analysisUpdate("")}
	file := filepath.Join(dir, "batch.hcl")
	if err := os.WriteFile(file, []byte(batch.hcl()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := p.cli(t, "job", "validate", file); err == nil || !strings.Contains(out, "update is not allowed for batch jobs") {
		t.Errorf("batch job: err %v\n%s", err, out)
	}

	// A good job without an address, on servers without prometheus_address.
	good := rolloutSpec{ID: "good", Count: 2, Version: "1", Update: analysisUpdate("")}
	file = filepath.Join(dir, "good.hcl")
	if err := os.WriteFile(file, []byte(good.hcl()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := p.cli(t, "job", "validate", file); err != nil {
		t.Fatalf("valid job: %v\n%s", err, out)
	}
	out, err := p.cli(t, "job", "run", "-detach", file)
	if err == nil || !strings.Contains(out, `analysis "errors" of group "web" names no address`) || !strings.Contains(out, "analysis.prometheus_address") {
		t.Errorf("job run without any address: err %v\n%s", err, out)
	}
	if _, _, err := p.client().Jobs().Info(ctx(t), "good", nil); err == nil {
		t.Errorf("the refused job was registered")
	}
}

// `drover job plan` names the analysis that gates after each batch, on
// servers with a Prometheus address.
func TestAnalysisPlanE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a dev agent and prometheus")
	}
	e := startAnalysisEnv(t)
	v1 := rolloutSpec{ID: "planned", Count: 3, Version: "1", Update: analysisUpdate("")}
	v1.run(t, e.c)
	waitRollout(t, e.c, "planned", 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	v2 := v1
	v2.Version = "2"
	file := filepath.Join(t.TempDir(), "planned.hcl")
	if err := os.WriteFile(file, []byte(v2.hcl()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := e.agent.cli(t, "job", "plan", file)
	rows := regexp.MustCompile(`(?m)^web\s+\d\s+-\s+web\[\d\]\s+false\s+-\s+errors$`).FindAllString(out, -1)
	if !regexp.MustCompile(`(?m)Pause After\s+Analysis$`).MatchString(out) || len(rows) != 3 {
		t.Errorf("plan without the gating analyses:\n%s", out)
	}
}

// A good metric lets a 4-batch rollout finish, one successful run per
// batch, each gating the next.
func TestAnalysisGoodMetricE2E(t *testing.T) {
	analysisRunsPending(t)
	e := startAnalysisEnv(t)
	e.setErrors(t, "good", "1", 0.001)
	v0 := rolloutSpec{ID: "good", Count: 4, Version: "0", Update: analysisUpdate("")}
	v0.run(t, e.c)
	waitRollout(t, e.c, "good", 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	v1 := v0
	v1.Version = "1"
	v1.run(t, e.c)
	d := waitRollout(t, e.c, "good", 1, structs.DeploymentStatusSuccessful, 3*time.Minute)
	runs := webState(t, d).Analyses
	if len(runs) != 4 {
		t.Fatalf("%d runs, want one per batch: %s", len(runs), jsonString(runs))
	}
	for i, r := range runs {
		if r.Batch != i+1 || r.Phase != structs.AnalysisPhaseSuccessful || r.Successes != 2 {
			t.Errorf("run %d: %s", i, jsonString(r))
		}
		if i > 0 && r.StartedAt.Before(runs[i-1].Measurements[len(runs[i-1].Measurements)-1].At) {
			t.Errorf("run %d started before run %d ended: the batch did not wait", i, i-1)
		}
	}
}

// A metric that turns bad mid-rollout fails the deployment and
// auto_revert restores the last stable version.
func TestAnalysisBadMetricRevertsE2E(t *testing.T) {
	analysisRunsPending(t)
	e := startAnalysisEnv(t)
	e.setErrors(t, "bad", "1", 0.001)
	v0 := rolloutSpec{ID: "bad", Count: 4, Version: "0", Update: analysisUpdate("      auto_revert = true\n")}
	v0.run(t, e.c)
	waitRollout(t, e.c, "bad", 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	v1 := v0
	v1.Version = "1"
	v1.run(t, e.c)
	waitDeploymentByID(t, e.c, mustLatest(t, e.c, "bad").ID, "the first run successful", time.Minute, func(d *structs.Deployment) error {
		for _, r := range webState(t, d).Analyses {
			if r.Phase == structs.AnalysisPhaseSuccessful {
				return nil
			}
		}
		return fmt.Errorf("runs: %s", jsonString(webState(t, d).Analyses))
	})
	e.setErrors(t, "bad", "1", 0.2)
	d := versionDeployment(t, e.c, "bad", 1, structs.DeploymentStatusFailed, 2*time.Minute)
	if !strings.HasPrefix(d.StatusDescription, `analysis "errors" failed`) {
		t.Errorf("description %q", d.StatusDescription)
	}
	waitRollout(t, e.c, "bad", 2, structs.DeploymentStatusSuccessful, 2*time.Minute)
}

// Prometheus stopped mid-rollout pauses it (inconclusive); resumed after
// Prometheus is back, it goes on.
func TestAnalysisOutagePausesE2E(t *testing.T) {
	analysisRunsPending(t)
	e := startAnalysisEnv(t)
	e.setErrors(t, "outage", "1", 0.001)
	v0 := rolloutSpec{ID: "outage", Count: 4, Version: "0", Update: analysisUpdate("", `error_limit = 1`)}
	v0.run(t, e.c)
	waitRollout(t, e.c, "outage", 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	e.prom.Stop()
	v1 := v0
	v1.Version = "1"
	v1.run(t, e.c)
	d := waitRollout(t, e.c, "outage", 1, structs.DeploymentStatusPaused, 2*time.Minute)
	if !strings.HasPrefix(d.StatusDescription, `analysis "errors" inconclusive`) {
		t.Errorf("description %q", d.StatusDescription)
	}
	e.prom.Restart()
	e.prom.WaitFor(`errors_ratio{job="outage"}`, 30*time.Second)
	if out, err := e.agent.cli(t, "deployment", "resume", d.ID); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	waitRollout(t, e.c, "outage", 1, structs.DeploymentStatusSuccessful, 3*time.Minute)
}

// A canary analysis holds auto_promote while the metric is bad and
// promotes once it is good.
func TestAnalysisCanaryE2E(t *testing.T) {
	analysisRunsPending(t)
	e := startAnalysisEnv(t)
	e.setErrors(t, "canary", "1", 0.03) // neither success nor failure: inconclusive
	upd := analysisUpdate("      canary = 1\n      auto_promote = true\n", `when = "canary"`, `inconclusive_limit = 100`, `count = 3`)
	v0 := rolloutSpec{ID: "canary", Count: 3, Version: "0", Update: upd}
	v0.run(t, e.c)
	waitRollout(t, e.c, "canary", 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	v1 := v0
	v1.Version = "1"
	v1.run(t, e.c)
	d := mustLatest(t, e.c, "canary")
	holdStill(t, e.c, "canary", 1, d.ID, 5*time.Second)
	if st := webState(t, deploymentByID(t, e.c, d.ID)); st.Promoted {
		t.Fatalf("promoted while the canary's metric is bad")
	}
	e.setErrors(t, "canary", "1", 0.001)
	waitRollout(t, e.c, "canary", 1, structs.DeploymentStatusSuccessful, 3*time.Minute)
}

// A background analysis fails a rollout between batches.
func TestAnalysisBackgroundFailsE2E(t *testing.T) {
	analysisRunsPending(t)
	e := startAnalysisEnv(t)
	e.setErrors(t, "bg", "1", 0.001)
	upd := analysisUpdate("", `when = "background"`)
	v0 := rolloutSpec{ID: "bg", Count: 4, Version: "0", Update: upd}
	v0.run(t, e.c)
	waitRollout(t, e.c, "bg", 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	v1 := v0
	v1.Version = "1"
	v1.run(t, e.c)
	eventually(t, time.Minute, "a healthy alloc of version 1", func() error {
		if n := countAllocs(allocsOf(t, e.c, "bg"), 1, healthy); n == 0 {
			return fmt.Errorf("none")
		}
		return nil
	})
	e.setErrors(t, "bg", "1", 0.2)
	d := versionDeployment(t, e.c, "bg", 1, structs.DeploymentStatusFailed, 2*time.Minute)
	if !strings.HasPrefix(d.StatusDescription, `analysis "errors" failed`) {
		t.Errorf("description %q", d.StatusDescription)
	}
}

func mustLatest(t *testing.T, c *apiclient.Client, jobID string) *structs.Deployment {
	t.Helper()
	var d *structs.Deployment
	eventually(t, 30*time.Second, "a deployment of "+jobID, func() error {
		var err error
		d, err = latestDeployment(t, c, jobID)
		return err
	})
	return d
}
