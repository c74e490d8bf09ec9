// Package promtest runs a real Prometheus server for tests: Debian's
// prometheus binary on a free 127.0.0.1 port, with a temporary storage
// directory and a configuration that scrapes the given targets every
// second, and a small exporter whose counters and gauges the test sets.
//
// Without the binary the tests that need it skip, unless
// DROVER_REQUIRE_PROMETHEUS=1 (CI sets it), which makes its absence a
// failure.
package promtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// StartTimeout bounds the wait for a started server to be ready.
const StartTimeout = 30 * time.Second

// Binary finds the prometheus binary or skips the test.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("DROVER_PROMETHEUS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	if os.Getenv("DROVER_REQUIRE_PROMETHEUS") == "1" {
		t.Fatal("prometheus is not installed and DROVER_REQUIRE_PROMETHEUS=1: install Debian's prometheus (apt-get install prometheus)")
	}
	t.Skip("prometheus is not installed: the analysis tests need Debian's prometheus (apt-get install prometheus); " +
		"DROVER_REQUIRE_PROMETHEUS=1 makes this a failure")
	return ""
}

// Server is one running (or stopped) Prometheus.
type Server struct {
	t       testing.TB
	bin     string
	dir     string
	port    int
	targets []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Start starts Prometheus scraping targets (host:port, path /metrics)
// every second and waits until it is ready. It is stopped when the test
// ends.
func Start(t testing.TB, targets ...string) *Server {
	t.Helper()
	s := &Server{t: t, bin: Binary(t), dir: t.TempDir(), port: freePort(t), targets: targets}
	if err := s.writeConfig(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	s.Restart()
	return s
}

// Address is the server's base URL, http://127.0.0.1:port.
func (s *Server) Address() string { return fmt.Sprintf("http://127.0.0.1:%d", s.port) }

func (s *Server) writeConfig() error {
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n")
	b.WriteString("scrape_configs:\n  - job_name: promtest\n    honor_labels: true\n    static_configs:\n      - targets: [")
	for i, tg := range s.targets {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(tg))
	}
	b.WriteString("]\n")
	return os.WriteFile(filepath.Join(s.dir, "prometheus.yml"), []byte(b.String()), 0o600)
}

// Restart starts a stopped server again on the same port with the same
// storage, and waits until it is ready.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "prometheus.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(s.bin,
		"--config.file="+filepath.Join(s.dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(s.dir, "data"),
		"--web.listen-address="+net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		s.t.Fatalf("start prometheus: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done, s.log = cmd, done, logf
	deadline := time.Now().Add(StartTimeout)
	for {
		select {
		case <-done:
			s.cmd = nil
			logf.Close()
			out, _ := os.ReadFile(logf.Name())
			s.t.Fatalf("prometheus exited before it was ready:\n%s", out)
		default:
		}
		resp, err := http.Get(s.Address() + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("prometheus at %s is not ready after %s", s.Address(), StartTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server (an outage, for a test); Restart starts it again.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.log.Close()
	s.cmd = nil
}

// WaitFor waits until query gives a non-empty result at the server (the
// exporter has been scraped), or fails the test after limit.
func (s *Server) WaitFor(query string, limit time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		resp, err := http.Get(s.Address() + "/api/v1/query?query=" + url.QueryEscape(query))
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && !strings.Contains(string(body), `"result":[]`) {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("prometheus: %q has no result after %s", query, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Exporter serves /metrics on 127.0.0.1 in Prometheus' text format, with
// the values the test sets.
type Exporter struct {
	srv *httptest.Server

	mu     sync.Mutex
	types  map[string]string // metric name -> "counter" | "gauge"
	series map[string]float64
}

// NewExporter starts an exporter; it is closed when the test ends.
func NewExporter(t testing.TB) *Exporter {
	e := &Exporter{types: map[string]string{}, series: map[string]float64{}}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

// Target is the exporter's host:port, for Start.
func (e *Exporter) Target() string { return strings.TrimPrefix(e.srv.URL, "http://") }

// Set sets a gauge's value.
func (e *Exporter) Set(name string, labels map[string]string, v float64) {
	e.put(name, "gauge", labels, v, false)
}

// Add adds v to a counter.
func (e *Exporter) Add(name string, labels map[string]string, v float64) {
	e.put(name, "counter", labels, v, true)
}

func (e *Exporter) put(name, typ string, labels map[string]string, v float64, add bool) {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	if len(keys) > 0 {
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=%s", k, strconv.Quote(labels[k]))
		}
		b.WriteByte('}')
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.types[name] = typ
	if add {
		e.series[b.String()] += v
	} else {
		e.series[b.String()] = v
	}
}

func (e *Exporter) serve(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	names := make([]string, 0, len(e.types))
	for n := range e.types {
		names = append(names, n)
	}
	sort.Strings(names)
	series := make([]string, 0, len(e.series))
	for s := range e.series {
		series = append(series, s)
	}
	sort.Strings(series)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	for _, n := range names {
		fmt.Fprintf(w, "# TYPE %s %s\n", n, e.types[n])
		for _, s := range series {
			if s == n || strings.HasPrefix(s, n+"{") {
				fmt.Fprintf(w, "%s %s\n", s, strconv.FormatFloat(e.series[s], 'g', -1, 64))
			}
		}
	}
}
