package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// The web UI (ui/, served at /ui/) in a real browser on a dev agent: each
// test reads what the page shows, as a user would, while the agent runs
// real allocations. See ui_browser_helpers_test.go for the browser.

// uiUpdate is a quick rollout: one at a time, healthy once running for
// min_healthy_time.
func uiUpdate(extra string) string {
	return `      max_parallel     = 1
      min_healthy_time = "2s"
      healthy_deadline = "1m"
      health_check     = "task_states"
` + extra
}

// TestUIJobsList: GET / takes a browser to the jobs list, which shows a
// job with its status, version and running/desired count and shows a
// job registered later without a reload; the job page lists its
// allocations, the node list the node, and an allocation's page its
// task's events and the tail of its stdout, as text (markup in it stays
// text).
func TestUIJobsList(t *testing.T) {
	chromiumPath(t)
	p := startDevAgent(t)
	c := p.client()
	rolloutSpec{ID: "ui-list", Count: 2, Update: uiUpdate(""), Version: "1",
		Script: `echo 'hello from the ui test <img src=x onerror="window.pwned=1">'; exec sleep 600`}.run(t, c)
	b := newBrowser(t, "http://"+p.httpAddr, 2*time.Minute)

	b.open("/")
	if got := js[string](b, "location.pathname"); got != "/ui/jobs" {
		t.Fatalf("GET / in a browser ends at %q, want /ui/jobs", got)
	}
	row := `tr[data-job="ui-list"]`
	b.waitText(row+` [data-k="running"]`, "2 / 2", time.Minute)
	b.waitText(row+` [data-k="version"]`, "0", 10*time.Second)
	if got := b.text(row + " .badge"); got != "running" {
		t.Errorf("the job's status shows %q, want running", got)
	}

	// The list is live: a job registered now appears without a reload.
	js[bool](b, "window.sameDocument = true")
	rolloutSpec{ID: "ui-later", Count: 1, Update: uiUpdate(""), Version: "1"}.run(t, c)
	b.waitText(`tr[data-job="ui-later"] [data-k="running"]`, "/ 1", 30*time.Second)
	if !js[bool](b, "window.sameDocument === true") {
		t.Fatal("the jobs list reloaded the page to show the new job")
	}

	b.click(row + " a")
	b.waitText("#job-version", "0", 10*time.Second)
	b.waitFor("the job's two allocations", 20*time.Second, func() bool {
		return js[int](b, "document.querySelectorAll('#job-allocs tr').length") == 2
	})
	b.waitText(`#job-groups tr[data-group="web"] [data-k="running"]`, "2", 10*time.Second)

	b.open("/ui/nodes")
	b.waitText("#nodes", "ready", 10*time.Second)

	allocs, err := jobAllocs(t, c, "ui-list")
	if err != nil || len(allocs) == 0 {
		t.Fatalf("allocations of ui-list: %v %v", allocs, err)
	}
	b.open("/ui/allocations/" + allocs[0].ID)
	b.waitText(`#alloc-tasks [data-task="main"]`, "Started", 20*time.Second)
	b.waitText("#log", `hello from the ui test <img src=x onerror="window.pwned=1">`, 20*time.Second)
	if js[bool](b, "window.pwned === 1 || document.querySelector('#log img') !== null") {
		t.Error("a task's log was read as markup")
	}
}

// TestUIRollingUpdateLive: the deployment page of a rolling update shows
// the new version's healthy count rising, batch by batch, while the page
// stays the same document (blocking queries, no reload), and ends with
// the old version gone and the capacity plot at count.
func TestUIRollingUpdateLive(t *testing.T) {
	chromiumPath(t)
	p := startDevAgent(t)
	c := p.client()
	spec := rolloutSpec{ID: "ui-rolling", Count: 4, Update: uiUpdate(""), Version: "1"}
	spec.run(t, c)
	waitRollout(t, c, spec.ID, 0, structs.DeploymentStatusSuccessful, time.Minute)
	b := newBrowser(t, "http://"+p.httpAddr, 3*time.Minute)

	spec.Version = "2"
	spec.run(t, c)
	dep := waitRollout(t, c, spec.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)
	b.open("/ui/deployments/" + dep.ID)
	js[bool](b, "window.sameDocument = true")

	group := `[data-group="web"] `
	var seen []string
	waits := map[string]bool{}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if v := b.text(group + `[data-k="new-healthy"]`); v != "" && (len(seen) == 0 || seen[len(seen)-1] != v) {
			seen = append(seen, v)
		}
		waits[b.text(group+`[data-k="waits"]`)] = true
		if b.text("#dep-status") == structs.DeploymentStatusSuccessful {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not show the deployment successful within 90s; healthy counts seen %v; the page:\n%s", seen, b.pageText())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v := b.text(group + `[data-k="new-healthy"]`); len(seen) == 0 || seen[len(seen)-1] != v {
		seen = append(seen, v)
	}
	t.Logf("new healthy counts shown: %v", seen)
	if len(seen) < 3 || seen[len(seen)-1] != "4" {
		t.Errorf("the healthy count shown went %v; want it to rise through at least three values to 4 while the page stays open", seen)
	}
	if !js[bool](b, "window.sameDocument === true") {
		t.Error("the deployment page reloaded itself")
	}
	if !slices.ContainsFunc(mapKeys(waits), func(s string) bool { return strings.Contains(s, "min_healthy_time 2s") }) {
		t.Errorf("no batch said it waits for min_healthy_time 2s; the group said: %q", mapKeys(waits))
	}
	if got := b.text(group + `[data-k="old-serving"]`); got != "0" {
		t.Errorf("old serving after the rollout: %q, want 0", got)
	}
	if got := b.text("#capacity-plot title"); got != "serving capacity: 0 old + 4 new healthy of 4" {
		t.Errorf("the capacity plot ends at %q", got)
	}
	if n := js[int](b, "document.querySelector('#capacity-plot .area-new').getAttribute('points').split(' ').length"); n < 8 {
		t.Errorf("the new version's area has %d points: the plot did not record the rollout's steps", n)
	}

	// The job page: version 1 with what changed from version 0, and the
	// deployment.
	b.click("#dep-facts a")
	b.waitText(`#job-versions [data-version="1"]`, "Group web › Task main › Env[VERSION]: 1 → 2", 10*time.Second)
	b.waitText(`#job-versions [data-version="0"]`, "first version", 10*time.Second)
	b.waitText("#job-deployment", dep.ID[:8], 10*time.Second)
	b.waitText("#job-deployment", structs.DeploymentStatusSuccessful, 10*time.Second)
}

// TestUIPromote: a canary deployment waits for promotion on its page; the
// Promote button asks first (Cancel changes nothing), and once confirmed
// the deployment promotes and rolls to success, shown without a reload.
func TestUIPromote(t *testing.T) {
	chromiumPath(t)
	p := startDevAgent(t)
	c := p.client()
	spec := rolloutSpec{ID: "ui-canary", Count: 2, Update: uiUpdate("      canary = 1\n"), Version: "1"}
	spec.run(t, c)
	waitRollout(t, c, spec.ID, 0, structs.DeploymentStatusSuccessful, time.Minute)
	spec.Version = "2"
	spec.run(t, c)
	dep := waitRollout(t, c, spec.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)

	b := newBrowser(t, "http://"+p.httpAddr, 3*time.Minute)
	b.open("/ui/deployments/" + dep.ID)
	b.waitText("#dep-waiting", "Waits for promotion", time.Minute)
	b.waitFor("the Promote button", 10*time.Second, func() bool { return b.visible("#btn-promote") })
	if b.visible("#btn-resume") {
		t.Error("a running deployment offers Resume")
	}

	b.click("#btn-promote")
	b.waitFor("the confirmation", 5*time.Second, func() bool { return js[bool](b, "document.getElementById('confirm').open") })
	b.click("#confirm-cancel")
	b.waitFor("the confirmation to close", 5*time.Second, func() bool { return !js[bool](b, "document.getElementById('confirm').open") })
	time.Sleep(500 * time.Millisecond)
	if d := deploymentInfo(t, c, dep.ID); d.TaskGroups["web"].Promoted {
		t.Fatal("cancelling the confirmation promoted the deployment")
	}

	b.click("#btn-promote")
	b.waitFor("the confirmation", 5*time.Second, func() bool { return js[bool](b, "document.getElementById('confirm').open") })
	b.click("#confirm-ok")
	b.waitText("#dep-action-result", "Promote: done", 10*time.Second)
	b.waitText("#dep-status", structs.DeploymentStatusSuccessful, time.Minute)
	d := deploymentInfo(t, c, dep.ID)
	if !d.TaskGroups["web"].Promoted || d.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("after Promote the deployment is %s, promoted %t", d.Status, d.TaskGroups["web"].Promoted)
	}
	if got := b.text(`[data-group="web"] [data-k="canaries"]`); got != "1/1 ✓" {
		t.Errorf("the canaries figure shows %q, want 1/1 ✓", got)
	}
	if b.visible("#btn-promote") || b.visible("#btn-fail") {
		t.Error("a successful deployment still offers Promote or Fail")
	}
}

// TestUIPauseResumeFail: a deployment paused at a checkpoint with a
// checkpoint_delay says when it resumes by itself and offers Resume; Resume,
// Pause and Fail from the page each act on the deployment, after a
// confirmation, and the page follows.
func TestUIPauseResumeFail(t *testing.T) {
	chromiumPath(t)
	p := startDevAgent(t)
	c := p.client()
	spec := rolloutSpec{ID: "ui-verbs", Count: 6, Version: "1",
		Update: uiUpdate("      checkpoints      = [2]\n      checkpoint_delay = \"10m\"\n")}
	spec.run(t, c)
	waitRollout(t, c, spec.ID, 0, structs.DeploymentStatusSuccessful, time.Minute)
	spec.Version = "2"
	spec.run(t, c)
	dep := waitRollout(t, c, spec.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)

	b := newBrowser(t, "http://"+p.httpAddr, 3*time.Minute)
	b.open("/ui/deployments/" + dep.ID)
	b.waitText("#dep-status", structs.DeploymentStatusPaused, time.Minute)
	b.waitText("#dep-waiting", "Resumes by itself at", 10*time.Second)
	b.waitText("#dep-waiting", "checkpoint 2 of group web", 10*time.Second)
	b.waitText(`[data-group="web"] [data-k="new-healthy"]`, "2", 10*time.Second)
	d := deploymentInfo(t, c, dep.ID)
	if want := d.ResumeAt.Local().Format("2006-01-02 15:04:05"); !strings.Contains(b.text("#dep-resume-at"), want) {
		t.Errorf("the page says it resumes at %q, want %s", b.text("#dep-resume-at"), want)
	}
	if b.visible("#btn-pause") || !b.visible("#btn-resume") {
		t.Error("a paused deployment should offer Resume and not Pause")
	}

	verb := func(btn string) {
		t.Helper()
		b.click(btn)
		b.waitFor("the confirmation", 5*time.Second, func() bool { return js[bool](b, "document.getElementById('confirm').open") })
		b.click("#confirm-ok")
	}
	verb("#btn-resume")
	b.waitText("#dep-status", structs.DeploymentStatusRunning, 10*time.Second)
	b.waitFor("the Pause button", 5*time.Second, func() bool { return b.visible("#btn-pause") })
	verb("#btn-pause")
	b.waitText("#dep-status", structs.DeploymentStatusPaused, 10*time.Second)
	b.waitText("#dep-waiting", "Waits for Resume (or Fail)", 10*time.Second)
	if d := deploymentInfo(t, c, dep.ID); d.Status != structs.DeploymentStatusPaused || !d.ResumeAt.IsZero() {
		t.Fatalf("after Pause the deployment is %s (resume at %s)", d.Status, d.ResumeAt)
	}
	verb("#btn-fail")
	b.waitText("#dep-status", structs.DeploymentStatusFailed, 10*time.Second)
	b.waitText("#dep-waiting", structs.DeploymentStatusDescriptionFailedByUser, 10*time.Second)
	if d := deploymentInfo(t, c, dep.ID); d.Status != structs.DeploymentStatusFailed {
		t.Fatalf("after Fail the deployment is %s", d.Status)
	}
	for _, btn := range []string{"#btn-promote", "#btn-pause", "#btn-resume", "#btn-fail"} {
		if b.visible(btn) {
			t.Errorf("a failed deployment still offers %s", btn)
		}
	}
}

// TestUIACLToken: with ACLs on, a page asks for a token; a refused secret
// is not kept; the bootstrap token is, and the page then shows the job
// and who the token is. A read-only token sees the deployment, and a verb
// it may not use is refused with the API's message and its buttons
// hidden.
func TestUIACLToken(t *testing.T) {
	chromiumPath(t)
	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	p := startAgentProc(t, "dev", httpAddr, "-dev", "-acl-enabled", "-http-addr", httpAddr, "-raft-addr", raftAddr, "-node", "dev")
	c := p.client()
	var boot *structs.ACLToken
	eventually(t, 30*time.Second, "ACL bootstrap", func() error {
		var err error
		boot, err = c.ACLBootstrap(ctx(t), "")
		return err
	})
	c.SetToken(boot.SecretID)
	p.waitNodeReadyWith(c, 1)
	if err := c.ACLPolicyApply(ctx(t), &structs.ACLPolicy{Name: "readonly",
		Rules: `namespace "default" { policy = "read" }` + "\n" + `node { policy = "read" }`}); err != nil {
		t.Fatal(err)
	}
	ro, err := c.ACLTokenCreate(ctx(t), &structs.ACLToken{Name: "reader", Type: structs.ACLTokenTypeClient, Policies: []string{"readonly"}})
	if err != nil {
		t.Fatal(err)
	}
	spec := rolloutSpec{ID: "ui-acl", Count: 2, Update: uiUpdate("      canary = 1\n"), Version: "1"}
	spec.run(t, c)
	waitRollout(t, c, spec.ID, 0, structs.DeploymentStatusSuccessful, time.Minute)
	spec.Version = "2"
	spec.run(t, c)
	dep := waitRollout(t, c, spec.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)

	b := newBrowser(t, "http://"+httpAddr, 3*time.Minute)
	b.open("/ui/jobs")
	b.waitFor("the token prompt", 20*time.Second, func() bool { return b.visible("#token-prompt") })
	if got := b.text("#token-prompt-message"); !strings.Contains(got, "Permission denied") {
		t.Errorf("the prompt says %q, want the API's refusal", got)
	}
	b.waitText("#whoami", "Anonymous", 10*time.Second)

	b.typeInto("#token-secret", "00000000-0000-0000-0000-000000000000")
	b.click("#token-save")
	b.waitText("#token-result", "ACL token not found", 10*time.Second)
	if got := js[string](b, "localStorage.getItem('drover.token') || ''"); got != "" {
		t.Fatalf("a refused secret was kept: %q", got)
	}

	js[string](b, "document.getElementById('token-secret').value = ''")
	b.typeInto("#token-secret", boot.SecretID)
	b.click("#token-save")
	b.waitText(`tr[data-job="ui-acl"]`, "ui-acl", 20*time.Second)
	b.waitText("#whoami", "management", 10*time.Second)
	if b.visible("#token-prompt") {
		t.Error("the token prompt stays after a good token")
	}

	// The read-only token, set on the token page.
	b.open("/ui/settings/tokens")
	b.waitText("#token-info", "management", 10*time.Second)
	b.typeInto("#token-secret", ro.SecretID)
	b.click("#token-save")
	b.waitText("#token-info", "readonly", 10*time.Second)
	b.waitText("#whoami", "reader (client)", 10*time.Second)

	b.open("/ui/deployments/" + dep.ID)
	b.waitText("#dep-waiting", "Waits for promotion", time.Minute)
	b.waitFor("the Pause button", 10*time.Second, func() bool { return b.visible("#btn-pause") })
	b.click("#btn-pause")
	b.waitFor("the confirmation", 5*time.Second, func() bool { return js[bool](b, "document.getElementById('confirm').open") })
	b.click("#confirm-ok")
	b.waitText("#dep-action-result", "Permission denied", 10*time.Second)
	for _, btn := range []string{"#btn-promote", "#btn-pause", "#btn-fail"} {
		if b.visible(btn) {
			t.Errorf("%s still shown to a token the API refused", btn)
		}
	}
	if d := deploymentInfo(t, c, dep.ID); d.Status != structs.DeploymentStatusRunning {
		t.Fatalf("the read-only token's Pause changed the deployment: %s", d.Status)
	}
	// A new page keeps them hidden for this token.
	b.open("/ui/deployments/" + dep.ID)
	b.waitText("#dep-waiting", "Waits for promotion", 20*time.Second)
	time.Sleep(300 * time.Millisecond)
	if b.visible("#btn-pause") || b.visible("#btn-promote") {
		t.Error("a new page offers the verbs the API refused to this token")
	}
}

// startZonedDev starts a dev agent (its node has no zone) and two client
// processes in zones a and b, and waits for the three nodes.
func startZonedDev(t *testing.T) *agentProc {
	t.Helper()
	p := startDevAgent(t)
	dir := t.TempDir()
	for _, z := range []struct{ node, zone string }{{"za", "a"}, {"zb", "b"}} {
		http, data := loopback.Addr(t), filepath.Join(dir, z.node)
		endTasksUnder(t, data)
		startAgentProc(t, z.node, http, "-client", "-data-dir", data, "-servers", p.httpAddr,
			"-http-addr", http, "-node", z.node, "-meta", "zone="+z.zone, "-log-level", "debug")
	}
	p.waitNodeReady(3)
	return p
}

// zonedUpdate rolls zone by zone, spread over the nodes' zone meta.
const zonedSpread = `    spread {
      attribute = "${node.meta.zone}"
    }`

// TestUIZones: a group that rolls zone by zone shows its zones in rollout
// order, each with its state, and the page follows them as one zone is
// done while the next has not finished.
func TestUIZones(t *testing.T) {
	chromiumPath(t)
	if testing.Short() {
		t.Skip("runs three agent processes")
	}
	p := startZonedDev(t)
	c := p.client()
	spec := rolloutSpec{ID: "ui-zones", Count: 3, Version: "1", Group: zonedSpread, Update: uiUpdate(`      zones {
        attribute         = "${node.meta.zone}"
        disruption_budget = 1
      }
`)}
	spec.run(t, c)
	waitRollout(t, c, spec.ID, 0, structs.DeploymentStatusSuccessful, time.Minute)
	b := newBrowser(t, "http://"+p.httpAddr, 3*time.Minute)
	spec.Version = "2"
	spec.run(t, c)
	dep := waitRollout(t, c, spec.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)
	b.open("/ui/deployments/" + dep.ID)

	zones := `[...document.querySelectorAll('[data-group="web"] tr[data-zone]')].map(r => r.children[0].textContent + ':' + r.querySelector('.badge').textContent).join(' ')`
	var seen []string
	deadline := time.Now().Add(90 * time.Second)
	for b.text("#dep-status") != structs.DeploymentStatusSuccessful {
		if z := js[string](b, zones); z != "" && (len(seen) == 0 || seen[len(seen)-1] != z) {
			seen = append(seen, z)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not show the deployment successful within 90s; zones seen %q; the page:\n%s", seen, b.pageText())
		}
		time.Sleep(50 * time.Millisecond)
	}
	seen = append(seen, js[string](b, zones))
	t.Logf("zones shown: %q", seen)
	last := strings.Fields(seen[len(seen)-1])
	if len(last) < 2 {
		t.Fatalf("the page shows %q: want the group's zones", seen[len(seen)-1])
	}
	for _, z := range last {
		if !strings.HasSuffix(z, ":done") {
			t.Errorf("after the rollout the page shows zone %s", z)
		}
	}
	// One zone at a time: the first done while the last is not.
	if !slices.ContainsFunc(seen, func(snap string) bool {
		f := strings.Fields(snap)
		return len(f) >= 2 && strings.HasSuffix(f[0], ":done") && !strings.HasSuffix(f[len(f)-1], ":done")
	}) {
		t.Errorf("the page never showed the first zone done before the last: %q", seen)
	}
}

// TestUIScreenshot writes the screenshot of website/ui.md: the deployment
// page in the middle of a zone-by-zone rollout with surge, one zone done
// and a batch in flight in the next. It runs only with
// DROVER_UI_SCREENSHOT set to the PNG's path (make screenshots).
func TestUIScreenshot(t *testing.T) {
	out := os.Getenv("DROVER_UI_SCREENSHOT")
	if out == "" {
		t.Skip("DROVER_UI_SCREENSHOT is not set (make screenshots sets it)")
	}
	chromiumPath(t)
	p := startZonedDev(t)
	c := p.client()
	spec := rolloutSpec{ID: "web", Count: 6, Version: "1", Group: zonedSpread, Update: `      max_parallel     = 2
      max_surge        = 1
      min_healthy_time = "5s"
      healthy_deadline = "1m"
      health_check     = "task_states"
      zones {
        attribute         = "${node.meta.zone}"
        disruption_budget = 2
      }
`}
	spec.run(t, c)
	waitRollout(t, c, spec.ID, 0, structs.DeploymentStatusSuccessful, 2*time.Minute)
	b := newBrowser(t, "http://"+p.httpAddr, 4*time.Minute)
	spec.Version = "2"
	spec.run(t, c)
	dep := waitRollout(t, c, spec.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)
	b.open("/ui/deployments/" + dep.ID)
	b.waitFor("a zone done and a batch in flight in the next", 2*time.Minute, func() bool {
		states := js[string](b, `[...document.querySelectorAll('[data-group="web"] tr[data-zone] .badge')].map(e => e.textContent).join(' ')`)
		return strings.Contains(states, "done") && strings.Contains(states, "rolling") &&
			b.text(`[data-group="web"] [data-k="in-flight"]`) != "0"
	})
	time.Sleep(time.Second)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	b.screenshot(out)
	t.Logf("wrote %s", out)
}

// deploymentInfo reads a deployment through the API.
func deploymentInfo(t *testing.T, c *apiclient.Client, id string) *structs.Deployment {
	t.Helper()
	d, _, err := c.Deployments().Info(ctx(t), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// waitNodeReadyWith waits for n ready nodes, reading with c (a token).
func (p *agentProc) waitNodeReadyWith(c *apiclient.Client, n int) {
	p.t.Helper()
	eventually(p.t, 30*time.Second, "ready client nodes", func() error {
		nodes, _, err := c.Nodes().List(ctx(p.t), nil)
		if err != nil {
			return err
		}
		ready := 0
		for _, nd := range nodes {
			if nd.Status == structs.NodeStatusReady {
				ready++
			}
		}
		if ready < n {
			return fmt.Errorf("%d of %d nodes ready", ready, n)
		}
		return nil
	})
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
