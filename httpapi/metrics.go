package httpapi

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"
)

// Every request a route serves is measured by wrap as the timer
// nomad.drover.http.request, labelled with the method, the route's pattern
// (/v1/job/{id}: never the request's path, so that the labels take as many
// values as there are routes, whatever the callers send) and the status
// code. Nomad names its timers by the raw path (nomad.http.GET./v1/job/web),
// one series per job, node and allocation ID; drover does not.

// requestMetric is the timer's name.
var requestMetric = []string{"drover", "http", "request"}

// requestLabels are the labels of a request served by the route of
// pattern ("GET /v1/job/{id}") with code.
func requestLabels(pattern string, code int) []metrics.Label {
	method, route, ok := strings.Cut(pattern, " ")
	if !ok {
		method, route = "ANY", pattern
	}
	return []metrics.Label{{Name: "method", Value: method}, {Name: "route", Value: route}, {Name: "code", Value: strconv.Itoa(code)}}
}

// statusRecorder remembers the status a handler answered with. It passes
// flushes, hijacks and http.ResponseController's calls through (the event
// stream flushes and sets write deadlines).
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack implements http.Hijacker.
func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("hijack: %w", http.ErrNotSupported)
	}
	if r.code == 0 {
		r.code = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// status is the code answered; 200 when the handler wrote nothing.
func (r *statusRecorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}

// measure wraps w for route pattern and returns the writer to use and the
// function that records the request when it is done.
func measure(w http.ResponseWriter, pattern string) (http.ResponseWriter, func()) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	return rec, func() {
		metrics.MeasureSinceWithLabels(requestMetric, start, requestLabels(pattern, rec.status()))
	}
}
