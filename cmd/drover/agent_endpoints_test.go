package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is an agent that answers from a function and keeps the
// requests it got.
type recorder struct {
	mu   sync.Mutex
	reqs []string // "METHOD PATH?QUERY BODY"
}

func (rec *recorder) server(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
		rec.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (rec *recorder) all() string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return strings.Join(rec.reqs, "\n")
}

func TestMonitorStreamsTheAgentsLog(t *testing.T) {
	var rec recorder
	srv := rec.server(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "2026-12-07T00:00:00Z [DEBUG] http: request complete\n2026-12-07T00:00:01Z [INFO]  agent: hello\n")
	})
	code, out, errOut := runCLI(t, "", "monitor", "-log-level", "debug", "-server-id", "leader", "-json", "-address", srv.URL)
	if code != 0 || !strings.Contains(out, "[DEBUG] http: request complete") || !strings.Contains(out, "agent: hello") {
		t.Fatalf("code %d, out %q, err %q", code, out, errOut)
	}
	got := rec.all()
	for _, want := range []string{"GET /v1/agent/monitor?", "log_level=debug", "plain=true", "server_id=leader", "log_json=true", "log_include_location=false"} {
		if !strings.Contains(got, want) {
			t.Errorf("request %q lacks %s", got, want)
		}
	}
	bad := rec.server(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "Unknown log level: loud", 400) })
	if code, _, errOut := runCLI(t, "", "monitor", "-log-level", "loud", "-address", bad.URL); code != 1 || !strings.Contains(errOut, "Error starting monitor") || !strings.Contains(errOut, "Unknown log level: loud") {
		t.Errorf("bad level: %d %q", code, errOut)
	}
}

func TestServerForceLeave(t *testing.T) {
	var rec recorder
	srv := rec.server(t, func(w http.ResponseWriter, r *http.Request) {})
	if code, out, errOut := runCLI(t, "", "server", "force-leave", "-prune", "-address", srv.URL, "node-2.global"); code != 0 || out != "" {
		t.Fatalf("code %d, out %q, err %q", code, out, errOut)
	}
	if got := rec.all(); got != "PUT /v1/agent/force-leave?node=node-2.global&prune=true" {
		t.Errorf("request %q", got)
	}
	if code, _, errOut := runCLI(t, "", "server", "force-leave", "-address", srv.URL); code != 1 || !strings.Contains(errOut, "This command takes one argument: <node>") {
		t.Errorf("no node: %d %q", code, errOut)
	}
}

func TestOperatorSchedulerSetConfigChecksAndSets(t *testing.T) {
	var rec recorder
	updated := true
	srv := rec.server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" {
			fmt.Fprint(w, `{"SchedulerConfig":{"SchedulerAlgorithm":"binpack","MemoryOversubscriptionEnabled":true,"CreateIndex":3,"ModifyIndex":5},"Index":5}`)
			return
		}
		fmt.Fprintf(w, `{"Updated":%v,"Index":9}`, updated)
	})
	code, out, errOut := runCLI(t, "", "operator", "scheduler", "set-config", "-scheduler-algorithm", "spread", "-pause-eval-broker", "true",
		"-node-limit-for-feasibility-checks", "50", "-address", srv.URL)
	if code != 0 || !strings.Contains(out, "Scheduler configuration updated!") {
		t.Fatalf("code %d, out %q, err %q", code, out, errOut)
	}
	lines := strings.Split(rec.all(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "PUT /v1/operator/scheduler/configuration?cas=5 ") {
		t.Fatalf("requests %q", lines)
	}
	var sent map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(lines[1], " ", 3)[2]), &sent); err != nil {
		t.Fatal(err)
	}
	if sent["SchedulerAlgorithm"] != "spread" || sent["PauseEvalBroker"] != true || sent["MemoryOversubscriptionEnabled"] != true || sent["NodeLimitForFeasibilityChecks"] != float64(50) {
		t.Errorf("sent %v", sent)
	}
	if code, _, errOut := runCLI(t, "", "operator", "scheduler", "set-config", "-check-index", "4", "-address", srv.URL); code != 1 || !strings.Contains(errOut, "check-index 4 does not match") {
		t.Errorf("stale check-index: %d %q", code, errOut)
	}
	updated = false
	if code, _, errOut := runCLI(t, "", "operator", "scheduler", "set-config", "-reject-job-registration", "true", "-address", srv.URL); code != 1 || !strings.Contains(errOut, "could not be atomically updated") {
		t.Errorf("lost cas: %d %q", code, errOut)
	}
	code, out, _ = runCLI(t, "", "operator", "scheduler", "get-config", "-address", srv.URL)
	if code != 0 || !strings.Contains(out, "Node Limit For Feasibility Checks") || !strings.Contains(out, "Modify Index") {
		t.Errorf("get-config: %d %q", code, out)
	}
}
