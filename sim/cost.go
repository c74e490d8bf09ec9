package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/droverhq/drover/httpapi"
)

// Figures of cost, which depend less on who else runs on the machine than
// the wall-clock ones: each server's CPU seconds per 1,000 allocs, the
// leader's and each follower's apart (from their own /proc/<pid>/stat
// counters), and the leader's live heap per alloc after a collection
// (GET /v1/operator/debug/heap).

// addServerCost records, under prefix, the CPU time each server spent per
// 1,000 allocs: cpu_leader_s_per_1k_allocs, cpu_follower1_… and
// cpu_follower2_… (followers in the order they were started), and the
// busier follower's share of the leader's. The leader is the one that
// leads at the end (the scenarios that measure cost change no leader).
func (e *env) addServerCost(prefix string, u cpuUse, allocs int) {
	if e.servers == nil || len(u.perServer) == 0 || allocs <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := e.servers.Leader(ctx)
	if err != nil {
		if l = e.servers.LastLeader(); l == nil {
			e.res.Note("%sCPU per alloc not split: no leader known: %v", prefix, err)
			return
		}
	}
	per := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(allocs) }
	leader, ok := u.perServer[l.PID()]
	if !ok {
		e.res.Note("%sCPU per alloc not split: the leader %s was not measured", prefix, l.Name)
		return
	}
	e.res.Add(prefix+"cpu_leader_s_per_1k_allocs", round(per(leader)), "s", "")
	var busiest time.Duration
	n := 0
	for _, p := range e.servers.Procs() {
		d, ok := u.perServer[p.PID()]
		if p == l || !ok {
			continue
		}
		n++
		busiest = max(busiest, d)
		e.res.Add(fmt.Sprintf("%scpu_follower%d_s_per_1k_allocs", prefix, n), round(per(d)), "s", "")
	}
	if n > 0 && leader > 0 {
		e.res.Add(prefix+"cpu_follower_over_leader", round(busiest.Seconds()/leader.Seconds()), "x", "<= 0.5")
	}
}

// addLeaderHeap records the leader's live heap after a collection, and
// per alloc when allocs (those the state holds) is above 0.
func (e *env) addLeaderHeap(prefix string, allocs int) {
	if e.servers == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := e.servers.Leader(ctx)
	if err != nil {
		if l = e.servers.LastLeader(); l == nil {
			e.res.Note("%sleader heap not read: %v", prefix, err)
			return
		}
	}
	h, err := readHeap(ctx, l.HTTPAddr)
	if err != nil {
		e.res.Note("%sleader heap not read: %v", prefix, err)
		return
	}
	e.res.Add(prefix+"leader_heap_live_mb", round(float64(h.LiveBytes)/(1<<20)), "MiB", "")
	if allocs > 0 {
		e.res.Add(prefix+"leader_heap_live_b_per_alloc", round(float64(h.LiveBytes)/float64(allocs)), "B", "<= 3072 at 100,000 allocs")
	}
}

// readHeap asks a server for its live heap after a collection.
func readHeap(ctx context.Context, addr string) (*httpapi.HeapLive, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/operator/debug/heap", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/operator/debug/heap on %s: %s", addr, resp.Status)
	}
	var h httpapi.HeapLive
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return nil, err
	}
	return &h, nil
}
