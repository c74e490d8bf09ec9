package telemetry

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"
	nomad "github.com/hashicorp/nomad/api"
)

// One process, one Telemetry: the first Setup wins.
func TestMetricsEndpoint(t *testing.T) {
	tel, err := Setup(Config{PrometheusMetrics: true, CollectionInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Setup(Config{}); again != tel {
		t.Fatal("a second Setup built new sinks")
	}
	metrics.IncrCounter([]string{"drover", "rollout", "batches_healthy"}, 2)
	metrics.MeasureSinceWithLabels([]string{"drover", "http", "request"}, time.Now().Add(-5*time.Millisecond),
		[]metrics.Label{{Name: "method", Value: "GET"}, {Name: "route", Value: "/v1/jobs"}, {Name: "code", Value: "200"}})
	metrics.SetGaugeWithLabels([]string{"drover", "deployments"}, 3, []metrics.Label{{Name: "status", Value: "running"}})
	srv := httptest.NewServer(tel.Handler())
	defer srv.Close()

	// Nomad's JSON, as the official client reads it.
	nc, err := nomad.NewClient(&nomad.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	sum, _, err := nc.Operator().MetricsSummary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var counter *nomad.SampledValue
	for i, c := range sum.Counters {
		if c.Name == "nomad.drover.rollout.batches_healthy" {
			counter = &sum.Counters[i]
		}
	}
	if counter == nil || counter.Sum != 2 || sum.Timestamp == "" {
		t.Fatalf("counters %+v", sum.Counters)
	}
	var sample *nomad.SampledValue
	for i, s := range sum.Samples {
		if s.Name == "nomad.drover.http.request" {
			sample = &sum.Samples[i]
		}
	}
	if sample == nil || sample.Count != 1 || sample.Min < 5 || sample.DisplayLabels["route"] != "/v1/jobs" {
		t.Fatalf("samples %+v", sum.Samples)
	}

	// Prometheus' text format, rendered by client_golang.
	resp, err := http.Get(srv.URL + "?format=prometheus")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		"nomad_drover_rollout_batches_healthy 2",
		`nomad_drover_http_request_count{code="200",method="GET",route="/v1/jobs"} 1`,
		`nomad_drover_deployments{status="running"} 3`,
		// Declared at start with its help, before any measurement.
		"# HELP nomad_nomad_broker_total_ready evaluations ready for a worker",
		"nomad_nomad_broker_total_ready 0",
		"go_goroutines ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("prometheus output lacks %q", want)
		}
	}
	if resp, err := http.Post(srv.URL, "text/plain", nil); err != nil || resp.StatusCode != 405 {
		t.Fatalf("POST: %v %v", err, resp)
	}
}

// Without prometheus_metrics the format is refused as Nomad's.
func TestPrometheusDisabled(t *testing.T) {
	tel := &Telemetry{cfg: Config{}, inmem: metrics.NewInmemSink(time.Second, time.Minute)}
	rec := httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/metrics?format=prometheus", nil))
	if rec.Code != http.StatusUnsupportedMediaType || !strings.Contains(rec.Body.String(), "Prometheus is not enabled") {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	tel.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/metrics", nil))
	var m map[string]any
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &m) != nil || m["Gauges"] == nil {
		t.Fatalf("JSON: %d %s", rec.Code, rec.Body.String())
	}
}

// website/api/metrics.md documents every figure of the catalog.
func TestCatalogDocumented(t *testing.T) {
	doc, err := os.ReadFile("../website/api/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Catalog {
		if !strings.Contains(string(doc), "`"+m.Name+"`") {
			t.Errorf("website/api/metrics.md does not document %s", m.Name)
		}
	}
}
