package sim

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The reads an operator makes while a scenario runs: who leads, and the
// job. A probe asks every server each every ReadProbeInterval, each read
// bounded by ReadProbeTimeout (a read that times out counts as that long).
//
// The probe runs in a process of its own (drover sim probe-reads), started
// before the simulator lowers its priority: timed from the niced fleet's
// process, a read would also wait for the fleet's own turn on a core.

const (
	ReadProbeInterval = 100 * time.Millisecond
	ReadProbeTimeout  = 5 * time.Second
)

// ProbeReads asks each server who leads and for the job every interval
// until ctx ends, writing one line per read to w:
//
//	<kind> <server> <start unix ns> <duration ns> <ok|timeout|error> [<why>]
//
// kind is "leader", "job" (a read the server answers from the leader, as
// every read without ?stale), "job_stale" (the same with ?stale: the
// server answers from its own copy) or "jobs" (GET /v1/jobs, the list with
// every job's summary, from the leader); an error says why in one word (the status, or
// the transport's error with spaces as underscores). A job the servers do
// not hold (404) is an answer like any other.
func ProbeReads(ctx context.Context, addrs []string, jobID string, interval time.Duration, w io.Writer) error {
	if len(addrs) == 0 {
		return errors.New("no server to probe")
	}
	var mu sync.Mutex
	out := bufio.NewWriter(w)
	var wg sync.WaitGroup
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One connection per server, kept, as a dashboard's would be;
			// a timed-out read drops it and the next dials again.
			hc := &http.Client{Timeout: ReadProbeTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for {
				for _, r := range []struct{ kind, path string }{
					{"leader", "/v1/status/leader"},
					{"job", "/v1/job/" + jobID},
					{"job_stale", "/v1/job/" + jobID + "?stale"},
					{"jobs", "/v1/jobs"},
				} {
					start := time.Now()
					outcome := readOnce(ctx, hc, "http://"+addr+r.path)
					if ctx.Err() != nil {
						return
					}
					mu.Lock()
					fmt.Fprintf(out, "%s %s %d %d %s\n", r.kind, addr, start.UnixNano(), time.Since(start).Nanoseconds(), outcome)
					_ = out.Flush()
					mu.Unlock()
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	wg.Wait()
	return nil
}

func readOnce(ctx context.Context, hc *http.Client, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "error " + oneWord(err.Error())
	}
	resp, err := hc.Do(req)
	if err != nil {
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() {
			return "timeout"
		}
		return "error " + oneWord(err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		// The body says which fault it was ("No cluster leader", a
		// forwarding error): its first line, in one word.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		why := "error status_" + strconv.Itoa(resp.StatusCode)
		if line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n"); line != "" {
			why += ":" + oneWord(truncate(line, probeWhyLen))
		}
		return why
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return "ok"
}

// probeWhyLen bounds how much of an error answer's body a probe line
// keeps.
const probeWhyLen = 160

// truncate cuts s to at most n bytes.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// oneWord makes s one field of a probe line.
func oneWord(s string) string { return strings.Join(strings.Fields(s), "_") }

// readSample is one probed read.
type readSample struct {
	kind    string
	start   time.Time
	took    time.Duration
	outcome string
	why     string // an error's reason
}

// readProbe collects what a probe process reports.
type readProbe struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu      sync.Mutex
	samples []readSample
}

// startReadProbe starts `binary sim probe-reads` against addrs; nil when
// there is no binary to run (servers given by address, in-process).
func startReadProbe(binary string, addrs []string, jobID string) (*readProbe, error) {
	if binary == "" {
		return nil, nil
	}
	cmd := exec.Command(binary, "sim", "probe-reads", "-servers", strings.Join(addrs, ","), "-job", jobID,
		"-interval", ReadProbeInterval.String())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the read probe: %w", err)
	}
	p := &readProbe{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if s, ok := parseReadSample(sc.Text()); ok {
				p.mu.Lock()
				p.samples = append(p.samples, s)
				p.mu.Unlock()
			}
		}
	}()
	return p, nil
}

func parseReadSample(line string) (readSample, bool) {
	f := strings.Fields(line)
	if len(f) != 5 && len(f) != 6 {
		return readSample{}, false
	}
	start, err1 := strconv.ParseInt(f[2], 10, 64)
	took, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return readSample{}, false
	}
	s := readSample{kind: f[0], start: time.Unix(0, start), took: time.Duration(took), outcome: f[4]}
	if len(f) == 6 {
		s.why = f[5]
	}
	return s, true
}

// stop ends the probe process.
func (p *readProbe) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	<-p.done
}

// readFigures are the probed reads of one kind started within a window:
// n of them, of which errors failed (by reason in why); the latencies are
// those of the others, a timeout counted as ReadProbeTimeout. A failed
// read says nothing of how long an answer takes (a stopped server's reads
// are refused at once), so it is counted, not timed.
type readFigures struct {
	n, timeouts, errors int
	p50, p99, max       time.Duration
	why                 map[string]int // errors by reason
}

func (p *readProbe) figures(kind string, from, to time.Time) readFigures {
	p.mu.Lock()
	defer p.mu.Unlock()
	var f readFigures
	var took []time.Duration
	for _, s := range p.samples {
		if s.kind != kind || s.start.Before(from) || s.start.After(to) {
			continue
		}
		switch s.outcome {
		case "timeout":
			f.timeouts++
			s.took = ReadProbeTimeout
		case "error":
			f.errors++
			if f.why == nil {
				f.why = map[string]int{}
			}
			f.why[cmp.Or(s.why, "unknown")]++
			continue
		}
		took = append(took, s.took)
	}
	f.n = len(took) + f.errors
	if len(took) == 0 {
		return f
	}
	slices.Sort(took)
	f.p50, f.p99, f.max = percentile(took, 0.50), percentile(took, 0.99), took[len(took)-1]
	return f
}

// addReadFigures records the reads probed between from and to under
// prefix ("place_", "rollout_").
func (e *env) addReadFigures(prefix string, from, to time.Time) {
	if e.reads == nil {
		return
	}
	for _, kind := range []string{"leader", "job", "job_stale", "jobs"} {
		f := e.reads.figures(kind, from, to)
		if f.n == 0 {
			e.res.Note("%sno %s read was probed", prefix, kind)
			continue
		}
		if f.errors > 0 {
			e.res.Note("%s%d of %d %s reads answered an error (%s)", prefix, f.errors, f.n, kind, countsText(f.why))
		}
		if f.errors == f.n {
			continue
		}
		name := prefix + "read_" + kind
		e.res.Add(name+"_p50_ms", round(ms(f.p50)), "ms", "")
		target := "<= 100"
		if kind == "jobs" {
			target = "<= 20"
		}
		e.res.Add(name+"_p99_ms", round(ms(f.p99)), "ms", target)
		e.res.Add(name+"_max_ms", round(ms(f.max)), "ms", "")
		e.res.Add(name+"_timeouts", float64(f.timeouts), "", "0")
	}
}

// countsText lists counts by key, most first: "status_503 × 3, EOF × 1".
func countsText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(m[b]-m[a], strings.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s × %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
