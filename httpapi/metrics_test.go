package httpapi

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"
)

func TestRequestLabelsUseThePattern(t *testing.T) {
	got := requestLabels("GET /v1/job/{id}", 404)
	want := []metrics.Label{{Name: "method", Value: "GET"}, {Name: "route", Value: "/v1/job/{id}"}, {Name: "code", Value: "404"}}
	if !slices.Equal(got, want) {
		t.Fatalf("labels %+v", got)
	}
}

// Requests are counted and timed by route pattern and status code: two
// jobs' reads are one series, and no label holds a path's ID.
func TestRequestMetricsByRouteAndCode(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	cfg := metrics.DefaultConfig("nomad")
	cfg.EnableHostname, cfg.EnableRuntimeMetrics = false, false
	if _, err := metrics.NewGlobal(cfg, sink); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = metrics.NewGlobal(cfg, &metrics.BlackholeSink{}) })

	b, srv := newTestAPI(t)
	_ = b
	for _, p := range []string{"/v1/job/web", "/v1/job/api", "/v1/job/web-secret-id", "/v1/jobs"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// A route that streams keeps its writer's flusher.
	rec := httptest.NewRecorder()
	w, done := measure(rec, "GET /v1/test")
	if _, ok := w.(http.Flusher); !ok {
		t.Fatal("the measured writer is not a Flusher")
	}
	w.WriteHeader(http.StatusTeapot)
	done()

	counts := map[string]int{}
	for _, iv := range sink.Data() {
		iv.RLock()
		for name, s := range iv.Samples {
			if strings.Contains(name, "web") || strings.Contains(name, "secret") {
				t.Errorf("a series names a path's ID: %s", name)
			}
			if strings.HasPrefix(name, "nomad.drover.http.request;") {
				counts[name] += s.Count
			}
		}
		iv.RUnlock()
	}
	want := map[string]int{
		"nomad.drover.http.request;method=GET;route=/v1/job/{id};code=404": 3,
		"nomad.drover.http.request;method=GET;route=/v1/jobs;code=200":     1,
		"nomad.drover.http.request;method=GET;route=/v1/test;code=418":     1,
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%s counted %d, want %d (all: %v)", k, counts[k], n, counts)
		}
	}
}
