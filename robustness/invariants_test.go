package robustness

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// rollCount and rollMaxParallel are job roll's count and max_parallel
// (rollJob): a rollout replaces one alloc at a time, so at least
// rollCount-rollMaxParallel allocs serve at every moment.
const (
	rollCount       = 3
	rollMaxParallel = 1
)

// sampler reads job roll's allocations and the deployments every second,
// through whichever server answers, and checks the rollout's invariants
// at each sample: no fewer than count - max_parallel allocs serving, no
// alloc name running twice, and a deployment that reached a terminal
// state never shows another.
type sampler struct {
	mu         sync.Mutex
	samples    int
	minServing int // the fewest allocs serving at one sample (-1: none yet)
	violations []string
	terminal   map[string]string // deployment ID -> its terminal status
	via        int
}

func (s *sampler) violate(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.violations) < 50 {
		s.violations = append(s.violations, time.Now().UTC().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
	}
}

func terminalStatus(st string) bool {
	return st == "successful" || st == "failed" || st == "cancelled"
}

func (s *sampler) run(ctx context.Context, c *cluster) {
	s.terminal = map[string]string{}
	s.minServing = -1
	for ctx.Err() == nil {
		s.sample(c)
		sleepCtx(ctx, time.Second)
	}
}

// sample takes one reading through the first server that answers both
// reads (default consistency: from the leader).
func (s *sampler) sample(c *cluster) {
	for range c.servers {
		srv := c.servers[s.via]
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		allocs, _, err := srv.api().Jobs().Allocations(ctx, "roll", nil)
		var deps []*structs.Deployment
		if err == nil {
			deps, _, err = srv.api().Deployments().List(ctx, nil)
		}
		cancel()
		if err != nil {
			s.via = (s.via + 1) % len(c.servers)
			continue
		}
		s.check(allocs, deps)
		return
	}
}

func (s *sampler) check(allocs []*structs.AllocationListStub, deps []*structs.Deployment) {
	s.mu.Lock()
	s.samples++
	s.mu.Unlock()
	serving := 0
	names := map[string]int{}
	for _, a := range allocs {
		if a.DesiredStatus == structs.AllocDesiredStatusRun && a.ClientStatus == structs.AllocClientStatusRunning {
			serving++
			names[a.Name]++
		}
	}
	s.mu.Lock()
	if s.minServing < 0 || serving < s.minServing {
		s.minServing = serving
	}
	s.mu.Unlock()
	if serving < rollCount-rollMaxParallel {
		s.violate("%d allocs serving, fewer than count %d - max_parallel %d: %s", serving, rollCount, rollMaxParallel, describeAllocs(allocs))
	}
	for name, n := range names {
		if n > 1 {
			s.violate("alloc %s running %d times: %s", name, n, describeAllocs(allocs))
		}
	}
	for _, d := range deps {
		if !terminalStatus(d.Status) {
			continue
		}
		s.mu.Lock()
		prev, seen := s.terminal[d.ID]
		if !seen {
			s.terminal[d.ID] = d.Status
		}
		s.mu.Unlock()
		if seen && prev != d.Status {
			s.violate("deployment %s was %s, now %s", d.ID, prev, d.Status)
		}
	}
}

func describeAllocs(allocs []*structs.AllocationListStub) string {
	var b strings.Builder
	for _, a := range allocs {
		if a.ClientStatus == structs.AllocClientStatusComplete && a.DesiredStatus == structs.AllocDesiredStatusStop {
			continue
		}
		fmt.Fprintf(&b, "[%s v%d %s/%s] ", a.Name, a.JobVersion, a.DesiredStatus, a.ClientStatus)
	}
	return b.String()
}

// tables are the lists compared between servers, each a path and the
// field that names an object.
var tables = []struct{ path, key string }{
	{"/v1/jobs", "ID"},
	{"/v1/allocations", "ID"},
	{"/v1/deployments", "ID"},
	{"/v1/evaluations", "ID"},
	{"/v1/nodes", "ID"},
}

// view is one server's copy of the tables: each table's index and its
// objects by ID (the raw JSON of the list's entry).
type view struct {
	server  string
	index   []uint64
	objects []map[string]json.RawMessage
	modify  []map[string]uint64
}

// readView reads every table from s's own copy (?stale).
func readView(s *server) (*view, error) {
	v := &view{server: s.name}
	for _, tb := range tables {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		var raw []map[string]json.RawMessage
		meta, err := s.api().Get(ctx, tb.path, &apiclient.QueryOptions{AllowStale: true}, &raw)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", s.name, tb.path, err)
		}
		objs := map[string]json.RawMessage{}
		mods := map[string]uint64{}
		for _, o := range raw {
			var id string
			_ = json.Unmarshal(o[tb.key], &id)
			var mi uint64
			_ = json.Unmarshal(o["ModifyIndex"], &mi)
			// A job's summary is kept apart from the job and changes
			// with its allocs, at indexes the job's does not show.
			delete(o, "JobSummary")
			b, _ := json.Marshal(o) // map keys sorted: canonical
			objs[id], mods[id] = b, mi
		}
		v.index = append(v.index, meta.LastIndex)
		v.objects = append(v.objects, objs)
		v.modify = append(v.modify, mods)
	}
	return v, nil
}

// diverge returns how b's copy contradicts a's: an object a holds,
// written at an index b has applied, that b lacks, holds older, or holds
// differently at the same index. Writes b has not applied yet are no
// contradiction.
func diverge(a, b *view) []string {
	var out []string
	for i, tb := range tables {
		for id, mi := range a.modify[i] {
			if mi > b.index[i] {
				continue
			}
			bmi, ok := b.modify[i][id]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s %s (index %d) on %s, missing on %s at index %d", tb.path, id, mi, a.server, b.server, b.index[i]))
			case bmi < mi:
				out = append(out, fmt.Sprintf("%s %s at index %d on %s, %d on %s", tb.path, id, mi, a.server, bmi, b.server))
			case bmi == mi && string(a.objects[i][id]) != string(b.objects[i][id]):
				out = append(out, fmt.Sprintf("%s %s at index %d differs: %s: %s; %s: %s", tb.path, id, mi, a.server, a.objects[i][id], b.server, b.objects[i][id]))
			}
		}
	}
	return out
}

// converge waits until every running server has applied what the leader
// had when it was called (each table's index) and no two servers'
// copies contradict each other; with exact, until all three copies are
// identical (the workload stopped). It returns how long that took, or an
// error that says what still differed.
func (c *cluster) converge(within time.Duration, exact bool) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(within)
	var target *view
	var last string
	same := time.Now()
	for time.Now().Before(deadline) {
		if target == nil {
			if l := c.leader(); l != nil {
				target, _ = readView(l)
			}
			if target == nil {
				time.Sleep(500 * time.Millisecond)
				continue
			}
		}
		var views []*view
		var problems []string
		for _, s := range c.servers {
			s.mu.Lock()
			down := s.stopped || s.paused
			s.mu.Unlock()
			if down {
				continue
			}
			v, err := readView(s)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			for i, tb := range tables {
				if v.index[i] < target.index[i] {
					problems = append(problems, fmt.Sprintf("%s: %s at index %d, the leader's was %d", s.name, tb.path, v.index[i], target.index[i]))
				}
			}
			views = append(views, v)
		}
		for i := range views {
			for j := range views {
				if i != j {
					problems = append(problems, diverge(views[i], views[j])...)
				}
			}
		}
		if exact && len(problems) == 0 {
			for i := 1; i < len(views); i++ {
				for k, tb := range tables {
					if views[i].index[k] != views[0].index[k] || len(views[i].objects[k]) != len(views[0].objects[k]) {
						problems = append(problems, fmt.Sprintf("%s: %s and %s differ (index %d, %d objects; index %d, %d objects)", tb.path,
							views[0].server, views[i].server, views[0].index[k], len(views[0].objects[k]), views[i].index[k], len(views[i].objects[k])))
					}
				}
			}
		}
		if len(problems) == 0 {
			return time.Since(start), nil
		}
		sort.Strings(problems)
		if len(problems) > 10 {
			problems = append(problems[:10], fmt.Sprintf("and %d more", len(problems)-10))
		}
		now := strings.Join(problems, "\n  ")
		// Copies that differ at the same index stay so until the object
		// is written again: after 10 s of the same differences only, the
		// wait ends (a run with one such divergence would otherwise wait
		// the whole time after every later heal).
		if now != last {
			same = time.Now()
		} else if onlyDiffers(problems) && time.Since(same) > 10*time.Second {
			return time.Since(start), fmt.Errorf("the servers' copies differ at the same index:\n  %s", now)
		}
		last = now
		time.Sleep(time.Second)
	}
	return time.Since(start), fmt.Errorf("the servers did not converge within %v:\n  %s", within, last)
}

// checkVersions checks that no version of job roll was lost: every
// server lists the same versions, newest first, without gaps, the newest
// at least the last one registered with an answer.
func checkVersions(t *testing.T, c *cluster, acked uint64) {
	var first []uint64
	for _, s := range c.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		vs, _, err := s.api().Jobs().Versions(ctx, "roll", &apiclient.QueryOptions{AllowStale: true})
		cancel()
		if err != nil {
			t.Errorf("%s: versions of roll: %v", s.name, err)
			continue
		}
		var got []uint64
		for _, v := range vs {
			got = append(got, v.Version)
		}
		for i := 1; i < len(got); i++ {
			if got[i] != got[i-1]-1 {
				t.Errorf("%s: versions of roll have a gap: %v", s.name, got)
			}
		}
		if len(got) == 0 || got[0] < acked {
			t.Errorf("%s: versions of roll %v, the last acknowledged was %d", s.name, got, acked)
		}
		if first == nil {
			first = got
		} else if fmt.Sprint(first) != fmt.Sprint(got) {
			t.Errorf("versions of roll differ: %s has %v, %s %v", c.servers[0].name, first, s.name, got)
		}
	}
}

// onlyDiffers reports whether every problem is a difference of content at
// the same index (diverge), which waiting does not mend.
func onlyDiffers(problems []string) bool {
	for _, p := range problems {
		if !strings.Contains(p, " differs: ") && !strings.HasPrefix(p, "and ") {
			return false
		}
	}
	return len(problems) > 0
}
