package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// The leader measures a rollout's changes of stage and of batch
// (nomad.drover.rollout.stage_start_time and batch_start_time, timers in
// its /v1/metrics). Its JSON answer holds the latest finished 10-second
// interval only, so a scenario polls every server's while the rollout
// runs, keeps the last reading of each interval (an agent that has only
// one shows it while it runs), and after the rollout waits for the
// interval that holds its end to finish.

// metricsInterval is the servers' in-memory metrics interval.
const metricsInterval = 10 * time.Second

// timerNames are the timers collected, by the figure prefix they give.
var timerNames = map[string]string{
	"nomad.drover.rollout.stage_start_time": "stage_start",
	"nomad.drover.rollout.batch_start_time": "batch_start",
	// What a change of stage or batch is made of: a scheduling pass of
	// the job, and its plan's commit.
	"nomad.nomad.worker.invoke_scheduler.service": "scheduler_run",
	"nomad.nomad.plan.submit":                     "plan_submit",
}

// timerSum is one timer summed over intervals.
type timerSum struct {
	count    int
	sum, max float64
}

// metricsSummary is the part of a /v1/metrics answer read here.
type metricsSummary struct {
	Timestamp string
	Samples   []struct {
		Name  string
		Count int
		Sum   float64
		Max   float64
	}
}

// timerPoller collects timers from the servers' metrics.
type timerPoller struct {
	mu   sync.Mutex
	from time.Time // intervals that start earlier are left out
	// intervals holds the last reading of each server's interval (key:
	// server and interval), by timer name.
	intervals map[string]map[string]timerSum
	latest    map[string]time.Time // per server: the latest interval seen
	stop      func()
	done      chan struct{}
}

// pollTimers polls the servers' metrics every interval until stopped,
// keeping the intervals that hold from or start later.
func (e *env) pollTimers(ctx context.Context, from time.Time, every time.Duration) *timerPoller {
	ctx, cancel := context.WithCancel(ctx)
	p := &timerPoller{from: from.Truncate(metricsInterval), intervals: map[string]map[string]timerSum{}, latest: map[string]time.Time{},
		stop: cancel, done: make(chan struct{})}
	hc := &http.Client{Timeout: 5 * time.Second}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			for _, a := range e.addrs() {
				p.read(ctx, hc, a)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *timerPoller) read(ctx context.Context, hc *http.Client, addr string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/metrics", nil)
	if err != nil {
		return
	}
	resp, err := hc.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var m metricsSummary
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&m) != nil {
		return
	}
	at, err := time.Parse("2006-01-02 15:04:05 -0700 MST", m.Timestamp)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if at.After(p.latest[addr]) {
		p.latest[addr] = at
	}
	if at.Before(p.from) {
		return
	}
	reading := map[string]timerSum{}
	for _, s := range m.Samples {
		if _, ok := timerNames[s.Name]; ok {
			reading[s.Name] = timerSum{count: s.Count, sum: s.Sum, max: s.Max}
		}
	}
	p.intervals[addr+" "+m.Timestamp] = reading
}

// finish waits (at most until ctx ends) until every server answering has
// shown the interval holding end finished, stops polling and adds the
// timers' count, mean and max to the result as <prefix><name>_*.
func (p *timerPoller) finish(ctx context.Context, e *env, prefix string, end time.Time) {
	want := end.Truncate(metricsInterval)
	deadline := time.NewTimer(metricsInterval + 5*time.Second)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		ready := len(p.latest) > 0
		for _, at := range p.latest {
			ready = ready && !at.Before(want)
		}
		p.mu.Unlock()
		if ready {
			break
		}
		select {
		case <-ctx.Done():
		case <-deadline.C:
		case <-time.After(500 * time.Millisecond):
			continue
		}
		break
	}
	p.stop()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	sums := map[string]timerSum{}
	for _, reading := range p.intervals {
		for name, v := range reading {
			t := sums[name]
			t.count += v.count
			t.sum += v.sum
			t.max = max(t.max, v.max)
			sums[name] = t
		}
	}
	for name, short := range timerNames {
		t := sums[name]
		if t.count == 0 {
			continue
		}
		e.res.Add(prefix+short+"s", float64(t.count), "", "")
		e.res.Add(prefix+short+"_ms_mean", round(t.sum/float64(t.count)), "ms", "")
		e.res.Add(prefix+short+"_ms_max", round(t.max), "ms", "")
	}
}
