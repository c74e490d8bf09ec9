package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The web UI's tests drive Debian's chromium, headless, with chromedp
// (the Chrome DevTools Protocol from Go, over a pipe to the browser: no
// driver binary, no port, no network). Without chromium they skip, unless
// DROVER_REQUIRE_CHROMIUM=1 (CI sets it), which makes its absence a
// failure.

// chromiumPath finds the browser or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("DROVER_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium is not installed and DROVER_REQUIRE_CHROMIUM=1: install Debian's chromium (apt-get install chromium)")
	}
	t.Skip("chromium is not installed: the web UI's browser tests need Debian's chromium (apt-get install chromium); " +
		"DROVER_REQUIRE_CHROMIUM=1 makes this a failure")
	return ""
}

// browser is one headless chromium with one tab, open on an agent's UI.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string

	mu sync.Mutex
	// problems are the page's uncaught exceptions and the browser's
	// security messages (a script or style the Content-Security-Policy
	// refused): each fails the test.
	problems []string
	console  []string
}

// newBrowser starts chromium for base (http://host:port) with a fresh
// profile; the whole session is bounded by limit. The browser is killed
// when the test ends.
func newBrowser(t *testing.T, base string, limit time.Duration) *browser {
	t.Helper()
	path := chromiumPath(t)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	)
	tctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, cancelTime := context.WithTimeout(tctx, limit)
	b := &browser{t: t, ctx: ctx, base: base}
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc()
		if t.Failed() {
			b.mu.Lock()
			t.Logf("---- browser console ----\n%s", strings.Join(b.console, "\n"))
			b.mu.Unlock()
		}
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	go b.watchConsole()
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range b.problems {
			t.Errorf("browser: %s", p)
		}
	})
	return b
}

func (b *browser) watchConsole() {
	for m, err := range chromedp.Console(b.ctx) {
		if err != nil {
			return
		}
		line := fmt.Sprintf("%s %s: %s (%s:%d)", m.Time.Format("15:04:05.000"), m.Type, m.Text, m.URL, m.Line)
		b.mu.Lock()
		b.console = append(b.console, line)
		if m.IsException() || m.Source == "security" || strings.Contains(m.Text, "Content Security Policy") {
			b.problems = append(b.problems, line)
		}
		b.mu.Unlock()
	}
}

// open navigates to a path of the agent.
func (b *browser) open(path string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(b.base+path)); err != nil {
		b.t.Fatalf("opening %s: %v", path, err)
	}
}

// js evaluates an expression in the page and decodes its value.
func js[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// quote makes a JavaScript string literal.
func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// text is the text of the first element sel selects, "" if none.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return js[string](b, fmt.Sprintf(`(document.querySelector(%s)?.textContent ?? '').trim()`, quote(sel)))
}

// visible reports whether sel selects an element that is displayed.
func (b *browser) visible(sel string) bool {
	b.t.Helper()
	return js[bool](b, fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && !e.closest('[hidden]') && e.getClientRects().length > 0; })()`, quote(sel)))
}

// waitFor polls cond until it holds, failing the test after limit with
// what the page shows.
func (b *browser) waitFor(what string, limit time.Duration, cond func() bool) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			b.t.Fatalf("timed out after %s waiting for %s; the page shows:\n%s", limit, what, b.pageText())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitText waits until sel's text contains want.
func (b *browser) waitText(sel, want string, limit time.Duration) {
	b.t.Helper()
	b.waitFor(fmt.Sprintf("%s to show %q", sel, want), limit, func() bool { return strings.Contains(b.text(sel), want) })
}

func (b *browser) pageText() string {
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
	if err != nil {
		return fmt.Sprintf("(cannot read the page: %v)", err)
	}
	return v
}

// click clicks the element sel selects, once it is visible.
func (b *browser) click(sel string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		b.t.Fatalf("clicking %s: %v\n%s", sel, err, b.pageText())
	}
}

// typeInto types keys into the field sel selects.
func (b *browser) typeInto(sel, keys string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.SendKeys(chromedp.CSS(sel), keys, chromedp.NodeVisible)); err != nil {
		b.t.Fatalf("typing into %s: %v", sel, err)
	}
}

// screenshot writes a PNG of the whole page.
func (b *browser) screenshot(path string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
