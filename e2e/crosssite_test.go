package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// rawRequest sends a request as given, headers included, and returns the
// status and the body.
func rawRequest(t *testing.T, method, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func nsJobJSON(id, ns string, count int) string {
	j := jobJSON(id)
	j["Namespace"] = ns
	j["TaskGroups"].([]any)[0].(map[string]any)["Count"] = count
	b, _ := json.Marshal(map[string]any{"Job": j})
	return string(b)
}

// The attacks of a token limited to namespace dev, on a dev agent with
// ACLs, each refused with nothing changed:
//
//  1. POST /v1/job/web/scale?namespace=dev with Target.Namespace prod
//     (prod's job would be scaled to 0);
//  2. DELETE /v1/job/web?namespace=* with and without purge (default's job
//     would be stopped or purged).
func TestNamespaceAttacksRefused(t *testing.T) {
	t.Setenv("NOMAD_TOKEN", "")
	t.Setenv("DROVER_TOKEN", "")
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
	base := "http://" + httpAddr
	mgmt := map[string]string{"X-Nomad-Token": boot.SecretID}
	if err := c.ACLPolicyApply(ctx(t), &structs.ACLPolicy{Name: "devonly",
		Rules: `namespace "dev" { policy = "write" }` + "\n" + `namespace "default" { policy = "deny" }`}); err != nil {
		t.Fatal(err)
	}
	tok, err := c.ACLTokenCreate(ctx(t), &structs.ACLToken{Name: "dev", Type: structs.ACLTokenTypeClient, Policies: []string{"devonly"}})
	if err != nil {
		t.Fatal(err)
	}
	dev := map[string]string{"X-Nomad-Token": tok.SecretID}
	for _, ns := range []string{"dev", "prod"} {
		if code, out := rawRequest(t, "PUT", base+"/v1/namespace", `{"Name":"`+ns+`"}`, mgmt); code != 200 {
			t.Fatalf("namespace %s: %d %s", ns, code, out)
		}
	}
	for _, ns := range []string{"default", "dev", "prod"} {
		if code, out := rawRequest(t, "PUT", base+"/v1/jobs", nsJobJSON("web", ns, 1), mgmt); code != 200 {
			t.Fatalf("registering %s's web: %d %s", ns, code, out)
		}
	}
	type seen struct {
		version uint64
		count   int
		stop    bool
	}
	look := func(ns string) seen {
		t.Helper()
		code, out := rawRequest(t, "GET", base+"/v1/job/web?namespace="+ns, "", mgmt)
		if code != 200 {
			t.Fatalf("%s's web: %d %s", ns, code, out)
		}
		var j structs.Job
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		return seen{j.Version, j.TaskGroups[0].Count, j.Stop}
	}
	prodBefore, defaultBefore := look("prod"), look("default")

	// 1. The scale of prod's job through a request that says dev.
	code, out := rawRequest(t, "POST", base+"/v1/job/web/scale?namespace=dev",
		`{"Count": 0, "Target": {"Namespace": "prod", "Group": "web"}}`, dev)
	if code != 400 || !strings.Contains(out, `"dev"`) || !strings.Contains(out, `"prod"`) {
		t.Errorf("scale with Target.Namespace prod: %d %s, want a 400 naming both namespaces", code, out)
	}
	// Without the query, the body's namespace is checked.
	if code, out := rawRequest(t, "POST", base+"/v1/job/web/scale",
		`{"Count": 0, "Target": {"Namespace": "prod", "Group": "web"}}`, dev); code != 403 {
		t.Errorf("scale of prod: %d %s, want 403", code, out)
	}
	if got := look("prod"); got != prodBefore {
		t.Fatalf("prod's job changed: %+v, was %+v", got, prodBefore)
	}

	// 2. The stop and the purge of default's job through "*".
	for _, q := range []string{"?namespace=*", "?namespace=*&purge=true"} {
		code, out := rawRequest(t, "DELETE", base+"/v1/job/web"+q, "", dev)
		if code != 400 || !strings.Contains(out, `namespace "*"`) {
			t.Errorf("DELETE /v1/job/web%s: %d %s, want a 400 about *", q, code, out)
		}
	}
	if got := look("default"); got != defaultBefore {
		t.Fatalf("default's job changed: %+v, was %+v", got, defaultBefore)
	}

	// The token still does what it may: scale its own namespace's job.
	if code, out := rawRequest(t, "POST", base+"/v1/job/web/scale?namespace=dev",
		`{"Count": 2, "Target": {"Group": "web"}}`, dev); code != 200 {
		t.Fatalf("scale of dev's own job: %d %s", code, out)
	}
	if got := look("dev"); got.count != 2 {
		t.Fatalf("dev's job has count %d after its scale to 2", got.count)
	}
}

// 3. On a dev agent (no ACLs, raw_exec on), requests that change state as
// a browser sends them for another site's page are refused and register
// nothing; the same request without an Origin (a program), or from the
// agent's own page, is served.
func TestCrossSiteWritesRefused(t *testing.T) {
	p := startDevAgent(t)
	base := "http://" + p.httpAddr
	job := nsJobJSON("evil", "default", 1)
	for _, tc := range []struct {
		name    string
		headers map[string]string
	}{
		{"text/plain from another site", map[string]string{"Origin": "http://attacker.example", "Content-Type": "text/plain;charset=UTF-8",
			"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}},
		{"a form from another site", map[string]string{"Origin": "http://attacker.example", "Content-Type": "application/x-www-form-urlencoded"}},
		{"multipart from another port of the same host", map[string]string{"Origin": "http://127.0.0.1:1", "Content-Type": "multipart/form-data; boundary=x",
			"Sec-Fetch-Site": "same-site"}},
		{"Origin: null", map[string]string{"Origin": "null", "Content-Type": "text/plain"}},
		{"Sec-Fetch-Site cross-site alone", map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}},
	} {
		for _, method := range []string{"POST", "PUT"} {
			code, out := rawRequest(t, method, base+"/v1/jobs", job, tc.headers)
			if code != 403 || !strings.Contains(out, "cross-site request refused") {
				t.Errorf("%s, %s: %d %s, want 403", tc.name, method, code, out)
			}
		}
	}
	// A job stop and an alloc restart from another site are refused too.
	for _, path := range []string{"/v1/job/evil", "/v1/client/allocation/x/restart"} {
		method := "DELETE"
		if strings.Contains(path, "restart") {
			method = "POST"
		}
		if code, out := rawRequest(t, method, base+path, "", map[string]string{"Origin": "http://attacker.example"}); code != 403 {
			t.Errorf("%s %s from another site: %d %s", method, path, code, out)
		}
	}
	c := p.client()
	if j, err := lookupJob(c, "evil"); err != nil || j != nil {
		t.Fatalf("a refused request registered the job: %v %v", j, err)
	}
	// A program's request, and the agent's own page's, are served.
	if code, out := rawRequest(t, "PUT", base+"/v1/jobs", job, map[string]string{"Content-Type": "text/plain"}); code != 200 {
		t.Fatalf("a program's request: %d %s", code, out)
	}
	if code, out := rawRequest(t, "PUT", base+"/v1/jobs", job, map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin",
		"Content-Type": "application/json"}); code != 200 {
		t.Fatalf("the agent's own page's request: %d %s", code, out)
	}
}

func lookupJob(c *apiclient.Client, id string) (*structs.Job, error) {
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var j structs.Job
	if _, err := c.Get(cctx, "/v1/job/"+id, nil, &j); err != nil {
		if strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), "not found") {
			return nil, nil
		}
		return nil, err
	}
	return &j, nil
}

// The same in a real browser: a page of another site (served on localhost,
// the agent on 127.0.0.1) posts a job to the agent with fetch() (no-cors,
// text/plain) and with an auto-submitted form; nothing is registered. The
// agent's own UI page then registers a job with fetch() and is served.
func TestBrowserCrossSitePageCannotWrite(t *testing.T) {
	chromiumPath(t)
	p := startDevAgent(t)
	agentURL := "http://" + p.httpAddr
	job := nsJobJSON("from-page", "default", 1)
	page := fmt.Sprintf(`<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" action="%[1]s/v1/jobs" enctype="text/plain" target="sink">
<input name='%[2]s' value=''>
</form>
<script>
window.attack = fetch(%[3]q + "/v1/jobs", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: %[4]s})
  .then(() => "sent", e => "failed: " + e);
document.getElementById("f").submit();
</script></body></html>`, agentURL, strings.ReplaceAll(job[:len(job)-1], "'", ""), agentURL, quote(job))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var requests int
	attacker := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, page)
	})}}
	attacker.Start()
	t.Cleanup(attacker.Close)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	b := newBrowser(t, "http://localhost:"+port, 2*time.Minute)
	b.open("/")
	if got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`window.attack`, chromedp.EvalAwaitPromise)); err != nil || got != "sent" {
		t.Fatalf("the page's fetch: %q %v", got, err)
	}
	// Give the form's navigation time to reach the agent (it is answered
	// 403 at once); then nothing may be registered.
	c := p.client()
	time.Sleep(time.Second)
	if j, err := lookupJob(c, "from-page"); err != nil || j != nil {
		t.Fatalf("another site's page registered a job: %v %v", j, err)
	}
	if requests == 0 {
		t.Fatal("the browser never loaded the attacker's page")
	}
	// The agent's own page writes.
	if _, err := chromedp.Run(b.ctx, chromedp.Navigate(agentURL+"/ui/jobs")); err != nil {
		t.Fatal(err)
	}
	status, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](fmt.Sprintf(
		`fetch("/v1/jobs", {method: "POST", headers: {"Content-Type": "application/json"}, body: %s}).then(r => r.status)`, quote(job)),
		chromedp.EvalAwaitPromise))
	if err != nil || status != 200 {
		t.Fatalf("the UI page's own write: %v %v", status, err)
	}
	if j, err := lookupJob(c, "from-page"); err != nil || j == nil {
		t.Fatalf("the UI page's write registered nothing: %v", err)
	}
}
