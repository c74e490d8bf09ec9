package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/droverhq/drover/autopilot"
	"github.com/droverhq/drover/structs"
)

func TestRaftStatsAreReadFromRaftsStrings(t *testing.T) {
	for _, c := range []struct {
		in   map[string]string
		want *autopilot.Stats
	}{
		{map[string]string{"last_log_index": "7", "last_log_term": "2", "last_contact": "0"}, &autopilot.Stats{LastIndex: 7, LastTerm: 2}},
		{map[string]string{"last_log_index": "7", "last_log_term": "2", "last_contact": "12.5ms"}, &autopilot.Stats{LastIndex: 7, LastTerm: 2, LastContact: 12500 * time.Microsecond}},
		{map[string]string{"last_log_index": "7", "last_log_term": "2", "last_contact": "never"}, &autopilot.Stats{LastIndex: 7, LastTerm: 2, LastContact: -1}},
		{map[string]string{"last_log_term": "2"}, nil},
		{nil, nil},
	} {
		got := raftStats(c.in)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("raftStats(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// A probe counts only the server it meant to reach, answering in time.
func TestProbeStatsChecksTheServersIdentity(t *testing.T) {
	self := structs.AgentSelf{Member: structs.ServerMember{ID: "b"},
		Stats: map[string]map[string]string{"raft": {"last_log_index": "9", "last_log_term": "3", "last_contact": "5ms"}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/agent/self" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(self)
	}))
	defer srv.Close()
	addr := srv.URL
	client := &http.Client{Timeout: probeTimeout}
	if s := probeStats(context.Background(), client, addr, "b", ""); s == nil || s.LastIndex != 9 || s.LastTerm != 3 {
		t.Fatalf("probe of b: %+v", s)
	}
	if s := probeStats(context.Background(), client, addr, "c", ""); s != nil {
		t.Fatalf("a server answering as b counted as c: %+v", s)
	}
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // a paused process: the connection opens, no answer comes
	}))
	defer stalled.Close()
	start := time.Now()
	if s := probeStats(context.Background(), client, stalled.URL, "b", ""); s != nil {
		t.Fatalf("a silent server answered: %+v", s)
	}
	if took := time.Since(start); took > 2*probeTimeout {
		t.Fatalf("the probe of a silent server took %s", took)
	}
}

func TestAutopilotIntervalFollowsTheStabilizationTime(t *testing.T) {
	for stab, want := range map[time.Duration]time.Duration{
		10 * time.Second: time.Second, time.Second: 250 * time.Millisecond, 0: 100 * time.Millisecond,
	} {
		if got := autopilotInterval(structs.AutopilotConfig{ServerStabilizationTime: stab}); got != want {
			t.Errorf("interval for %s: %s, want %s", stab, got, want)
		}
	}
}
