package sim

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The probe reads both paths of every server; its lines parse back into
// samples, and a slow answer shows in the figures of its window only.
func TestProbeReads(t *testing.T) {
	var slow sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/status/leader":
			slow.Do(func() { time.Sleep(150 * time.Millisecond) })
			_, _ = w.Write([]byte(`"127.0.0.1:4647"`))
		case "/v1/job/j":
			http.Error(w, "job not found", http.StatusNotFound)
		case "/v1/jobs":
			_, _ = w.Write([]byte(`[]`))
		default:
			http.Error(w, "no", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ProbeReads(ctx, []string{addr}, "j", 10*time.Millisecond, pw) }()
	var lines []string
	sc := bufio.NewScanner(pr)
	for len(lines) < 10 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }() // lines written while it stops
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if len(lines) < 10 {
		t.Fatalf("%d lines from the probe: %v", len(lines), sc.Err())
	}
	p := &readProbe{}
	for _, line := range lines {
		s, ok := parseReadSample(line)
		if !ok {
			t.Fatalf("unparsed line %q", line)
		}
		if s.outcome != "ok" {
			t.Fatalf("%q: a 404 is an answer", line)
		}
		p.samples = append(p.samples, s)
	}
	first := p.samples[0].start
	all := p.figures("leader", first, time.Now())
	if all.n < 2 || all.max < 150*time.Millisecond || all.p50 >= 150*time.Millisecond || all.timeouts != 0 {
		t.Fatalf("leader reads %+v", all)
	}
	later := p.figures("leader", first.Add(time.Nanosecond), time.Now())
	if later.n != all.n-1 || later.max >= 150*time.Millisecond {
		t.Fatalf("the window after the slow read: %+v", later)
	}
	if jobs := p.figures("job", first, time.Now()); jobs.n < 2 {
		t.Fatalf("job reads %+v", jobs)
	}
	if list := p.figures("jobs", first, time.Now()); list.n < 2 {
		t.Fatalf("job list reads %+v", list)
	}
}

func TestParseReadSampleRefusesGarbage(t *testing.T) {
	for _, line := range []string{"", "leader a 1 2", "leader a x 2 ok", "leader a 1 y ok"} {
		if _, ok := parseReadSample(line); ok {
			t.Errorf("%q parsed", line)
		}
	}
}

func TestReadErrorsAreCountedByReason(t *testing.T) {
	base := time.Unix(100, 0).UnixNano()
	p := &readProbe{}
	for i, line := range []string{
		"job a %d 10 error status_503",
		"job a %d 10 error status_503",
		"job b %d 10 error read_tcp:_connection_reset_by_peer",
		"job b %d 10 error",
		"job b %d 1000 ok",
	} {
		s, ok := parseReadSample(fmt.Sprintf(line, base+int64(i)))
		if !ok {
			t.Fatalf("%q not parsed", line)
		}
		p.samples = append(p.samples, s)
	}
	p.samples = append(p.samples, readSample{kind: "job", start: time.Unix(0, base+5), took: 3000, outcome: "ok"})
	f := p.figures("job", time.Unix(0, base), time.Unix(0, base+10))
	if f.n != 6 || f.errors != 4 {
		t.Fatalf("figures %+v", f)
	}
	// Only the answered reads are timed: the failed ones took 10 ns.
	if f.p50 != 1000 || f.max != 3000 || f.p99 != 3000 {
		t.Fatalf("latencies %v %v %v, want those of the two answered reads", f.p50, f.p99, f.max)
	}
	want := "status_503 × 2, read_tcp:_connection_reset_by_peer × 1, unknown × 1"
	if got := countsText(f.why); got != want {
		t.Fatalf("reasons %q, want %q", got, want)
	}
}

// A 500 is recorded with the first line of its body, in one word, so that
// a result says which fault it was.
func TestReadOnceKeepsAnErrorsBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forwarding to the leader: No cluster leader\nmore", http.StatusInternalServerError)
	}))
	defer srv.Close()
	got := readOnce(context.Background(), srv.Client(), srv.URL+"/v1/jobs")
	if want := "error status_500:forwarding_to_the_leader:_No_cluster_leader"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	s, ok := parseReadSample("jobs 127.0.0.1:1 1 2 " + got)
	if !ok || s.outcome != "error" || !strings.HasPrefix(s.why, "status_500:") {
		t.Fatalf("parsed %+v %v", s, ok)
	}
}
