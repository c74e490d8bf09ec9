package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The poller sums a timer over the intervals a server shows, keeping the
// last reading of each (a fresh agent shows its only interval while it
// runs), leaves out intervals before the rollout, and waits for the
// interval holding the end to be shown.
func TestTimerPoller(t *testing.T) {
	var mu sync.Mutex
	type sample struct {
		Name     string
		Count    int
		Sum, Max float64
	}
	show := func(ts time.Time, samples ...sample) map[string]any {
		return map[string]any{"Timestamp": ts.UTC().Format("2006-01-02 15:04:05 -0700 MST"), "Samples": samples}
	}
	base := time.Now().Truncate(metricsInterval)
	stage := "nomad.drover.rollout.stage_start_time"
	answers := []map[string]any{
		show(base.Add(-metricsInterval), sample{stage, 9, 900, 100}), // before the rollout
		show(base, sample{stage, 1, 10, 10}),                         // the current interval, read early
		show(base, sample{stage, 3, 36, 20}),                         // the same, finished
		show(base.Add(metricsInterval), sample{stage, 1, 8, 8}),      // the interval holding the end
	}
	served := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		a := answers[min(served, len(answers)-1)]
		served++
		_ = json.NewEncoder(w).Encode(a)
	}))
	defer srv.Close()
	e := &env{addrs: func() []string { return []string{strings.TrimPrefix(srv.URL, "http://")} }, res: &Result{}}
	p := e.pollTimers(context.Background(), base, 10*time.Millisecond)
	p.finish(context.Background(), e, "rollout_", base.Add(metricsInterval+time.Second))
	for name, want := range map[string]float64{"rollout_stage_starts": 4, "rollout_stage_start_ms_mean": 11, "rollout_stage_start_ms_max": 20} {
		if got, ok := e.res.Figure(name); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
		}
	}
	if _, ok := e.res.Figure("rollout_batch_starts"); ok {
		t.Error("a timer never measured has figures")
	}
}
