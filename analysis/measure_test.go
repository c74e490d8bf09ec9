package analysis

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/promtest"
	"github.com/droverhq/drover/structs"
)

// One Prometheus for the tests of Measure against a real server, scraping
// an exporter the tests set.
func startProm(t *testing.T) (*promtest.Server, *promtest.Exporter) {
	t.Helper()
	exp := promtest.NewExporter(t)
	exp.Set("errors_ratio", map[string]string{"job": "web", "version": "2"}, 0.002)
	exp.Set("errors_ratio", map[string]string{"job": "web", "version": "3"}, 0.09)
	exp.Set("latency_seconds", map[string]string{"zone": "a"}, 0.1)
	exp.Set("latency_seconds", map[string]string{"zone": "b"}, 0.3)
	exp.Add("http_requests_total", nil, 100)
	srv := promtest.Start(t, exp.Target())
	srv.WaitFor(`latency_seconds`, 30*time.Second)
	srv.WaitFor(`errors_ratio`, 30*time.Second)
	return srv, exp
}

func TestMeasurePrometheus(t *testing.T) {
	srv, _ := startProm(t)
	refs := Refs{JobName: "web", JobVersion: 3, StableVersion: 2, Group: "api", DeploymentID: "d1"}
	now := time.Now()
	cases := []struct {
		name    string
		a       structs.Analysis
		outcome string
		err     string // substring of the error
		results []float64
	}{
		{"good value", structs.Analysis{Query: `errors_ratio{job="${job.name}",version="${stable.version}"}`, Success: "result < 0.01"},
			structs.AnalysisOutcomeSuccess, "", []float64{0.002}},
		{"bad value, failure", structs.Analysis{Query: `errors_ratio{job="${job.name}",version="${job.version}"}`, Success: "result < 0.01", Failure: "result >= 0.05"},
			structs.AnalysisOutcomeFailure, "", []float64{0.09}},
		{"neither", structs.Analysis{Query: `errors_ratio{version="${job.version}"}`, Success: "result < 0.01", Failure: "result >= 0.5"},
			structs.AnalysisOutcomeInconclusive, "", []float64{0.09}},
		{"several samples, results", structs.Analysis{Query: `sort(latency_seconds)`, Success: "max(results...) < 0.5 && length(results) == 2"},
			structs.AnalysisOutcomeSuccess, "", []float64{0.1, 0.3}},
		{"alltrue over results", structs.Analysis{Query: `sort(latency_seconds)`, Success: "alltrue([for r in results : r < 0.2])", Failure: "anytrue([for r in results : r >= 0.2])"},
			structs.AnalysisOutcomeFailure, "", []float64{0.1, 0.3}},
		{"scalar", structs.Analysis{Query: `scalar(sum(latency_seconds)) * 2`, Success: "abs(result - 0.8) < 0.0001"},
			structs.AnalysisOutcomeSuccess, "", []float64{0.8}},
		{"empty vector", structs.Analysis{Query: `errors_ratio{job="none"}`, Success: "result < 1"},
			structs.AnalysisOutcomeError, "empty result", nil},
		{"NaN", structs.Analysis{Query: `0/0`, Success: "result < 1"},
			structs.AnalysisOutcomeError, "NaN", nil},
		{"PromQL syntax error", structs.Analysis{Query: `sum(rate(errors_ratio[1m]`, Success: "result < 1"},
			structs.AnalysisOutcomeError, "bad_data", nil},
		{"condition gives a string", structs.Analysis{Query: `vector(1)`, Success: `"yes"`},
			structs.AnalysisOutcomeError, "not a bool", nil},
		{"condition errors", structs.Analysis{Query: `vector(1)`, Success: `results[5] > 0`},
			structs.AnalysisOutcomeError, "success", nil},
		{"zone reference", structs.Analysis{Query: `latency_seconds{zone="${zone}"}`, Success: "result < 0.2"},
			structs.AnalysisOutcomeError, "empty result", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			m := Measure(ctx, &c.a, srv.Address(), refs, now)
			if m.Outcome != c.outcome {
				t.Fatalf("outcome %q (error %q), want %q", m.Outcome, m.Error, c.outcome)
			}
			if !m.At.Equal(now) {
				t.Errorf("At %v, want %v", m.At, now)
			}
			if c.err != "" && !strings.Contains(m.Error, c.err) {
				t.Errorf("error %q, want it to contain %q", m.Error, c.err)
			}
			if c.err == "" && m.Error != "" {
				t.Errorf("unexpected error %q", m.Error)
			}
			if c.results != nil {
				if len(m.Results) != len(c.results) {
					t.Fatalf("results %v, want %v", m.Results, c.results)
				}
				for i := range c.results {
					if d := m.Results[i] - c.results[i]; d > 1e-9 || d < -1e-9 {
						t.Fatalf("results %v, want %v", m.Results, c.results)
					}
				}
				if m.Result == nil || *m.Result != m.Results[0] {
					t.Fatalf("result %v, want the first of %v", m.Result, m.Results)
				}
			}
		})
	}

	// The zone reference is substituted.
	zr := refs
	zr.Zone = "a"
	m := Measure(context.Background(), &structs.Analysis{Query: `latency_seconds{zone="${zone}"}`, Success: "result < 0.2"}, srv.Address(), zr, now)
	if m.Outcome != structs.AnalysisOutcomeSuccess {
		t.Fatalf("zone a: %+v", m)
	}

	// The analysis' own address wins over the default.
	m = Measure(context.Background(), &structs.Analysis{Address: srv.Address(), Query: `vector(1)`, Success: "result == 1"}, "http://127.0.0.1:1", refs, now)
	if m.Outcome != structs.AnalysisOutcomeSuccess {
		t.Fatalf("own address: %+v", m)
	}

	// An outage: the stopped server is an error, the restarted one answers.
	srv.Stop()
	m = Measure(context.Background(), &structs.Analysis{Query: `vector(1)`, Success: "result == 1"}, srv.Address(), refs, now)
	if m.Outcome != structs.AnalysisOutcomeError || !strings.Contains(m.Error, "connection refused") {
		t.Fatalf("stopped: %+v", m)
	}
	srv.Restart()
	m = Measure(context.Background(), &structs.Analysis{Query: `vector(1)`, Success: "result == 1"}, srv.Address(), refs, now)
	if m.Outcome != structs.AnalysisOutcomeSuccess {
		t.Fatalf("restarted: %+v", m)
	}
}

func TestMeasureUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	l.Close()
	m := Measure(context.Background(), &structs.Analysis{Query: "vector(1)", Success: "result == 1"}, addr, Refs{}, time.Now())
	if m.Outcome != structs.AnalysisOutcomeError || !strings.Contains(m.Error, addr) {
		t.Fatalf("%+v", m)
	}
}

func TestMeasureNoAddress(t *testing.T) {
	m := Measure(context.Background(), &structs.Analysis{Query: "vector(1)", Success: "result == 1"}, "", Refs{}, time.Now())
	if m.Outcome != structs.AnalysisOutcomeError || !strings.Contains(m.Error, "prometheus_address") {
		t.Fatalf("%+v", m)
	}
}

func TestMeasureHTTPError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "upstream broke", http.StatusInternalServerError)
	}))
	defer srv.Close()
	m := Measure(context.Background(), &structs.Analysis{Query: "vector(1)", Success: "result == 1"}, srv.URL, Refs{}, time.Now())
	if m.Outcome != structs.AnalysisOutcomeError || !strings.Contains(m.Error, "500") {
		t.Fatalf("%+v", m)
	}
}

func TestMeasureTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	old := QueryTimeout
	QueryTimeout = 200 * time.Millisecond
	defer func() { QueryTimeout = old }()
	m := Measure(context.Background(), &structs.Analysis{Query: "vector(1)", Success: "result == 1"}, srv.URL, Refs{}, time.Now())
	if m.Outcome != structs.AnalysisOutcomeError || !strings.Contains(m.Error, "no answer within 200ms") {
		t.Fatalf("%+v", m)
	}
}

func TestSubstitute(t *testing.T) {
	got := Substitute(`x{j="${job.name}",v="${job.version}",s="${stable.version}",g="${group.name}",d="${deployment.id}",z="${zone}",o="${other}"}`,
		Refs{JobName: "web", JobVersion: 4, StableVersion: 3, Group: "api", DeploymentID: "d-1", Zone: "eu"})
	want := `x{j="web",v="4",s="3",g="api",d="d-1",z="eu",o="${other}"}`
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func TestEvaluate(t *testing.T) {
	cases := []struct {
		success, failure string
		values           []float64
		outcome, err     string
	}{
		{"result < 1", "", []float64{0.5}, "success", ""},
		{"result < 1", "result > 2", []float64{3}, "failure", ""},
		{"result < 1", "result > 2", []float64{1.5}, "inconclusive", ""},
		{"", "result > 2", []float64{1.5}, "inconclusive", ""},
		{"sum(results) / length(results) < 1", "", []float64{0.5, 1.2}, "success", ""},
		{"min(results...) > 0", "", []float64{0.5, -1}, "inconclusive", ""},
		{"result", "", []float64{1}, "", "not a bool"},
		{"nope > 1", "", []float64{1}, "", "only result and results"},
		{"result <", "", []float64{1}, "", "does not parse"},
		{"upper(result)", "", []float64{1}, "", "unknown function"},
		{"alltrue(results)", "", []float64{1}, "", "alltrue"},
	}
	for _, c := range cases {
		got, err := Evaluate(c.success, c.failure, c.values)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q/%q: err %v, want %q", c.success, c.failure, err, c.err)
			}
			continue
		}
		if err != nil || got != c.outcome {
			t.Errorf("%q/%q on %v: %q, %v; want %q", c.success, c.failure, c.values, got, err, c.outcome)
		}
	}
}
