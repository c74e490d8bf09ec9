package robustness

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// regJob is the register: job "reg", whose meta "v" is its value.
func regJob(t testing.TB, v int) *structs.Job {
	src := fmt.Sprintf(`job "reg" {
  meta { v = "%d" }
  group "g" {
    count = 0
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
    }
  }
}`, v)
	return parse(t, src)
}

// rollJob is the rollout: three allocs, one at a time.
func rollJob(t testing.TB, version int) *structs.Job {
	src := fmt.Sprintf(`job "roll" {
  update {
    max_parallel      = 1
    min_healthy_time  = "1s"
    healthy_deadline  = "30s"
    progress_deadline = "5m"
  }
  group "g" {
    count = 3
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      env { VERSION = "%d" }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, version)
	return parse(t, src)
}

func parse(t testing.TB, src string) *structs.Job {
	t.Helper()
	j, _, err := jobspec.Parse("job.hcl", []byte(src), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// op is one recorded request: a write of V, or a read that returned V.
type op struct {
	Client int
	Server string
	Write  bool
	V      int
	Call   int64
	Return int64  // math.MaxInt64: a write whose outcome is unknown
	Err    string `json:",omitempty"`
	Took   int64  // nanoseconds from call to answer or error
}

// history is what the workload's clients did, in the order they did it.
type history struct {
	mu          sync.Mutex
	ops         []op
	failedReads []op
	t0          time.Time
}

func (h *history) add(o op) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, o)
}

func (h *history) now() int64 { return int64(time.Since(h.t0)) }

// registerModel is the job's meta v as a register: a write sets it, a
// read returns it (0 before the first write).
var registerModel = porcupine.Model{
	Init: func() interface{} { return 0 },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(op)
		if in.Write {
			return true, in.V
		}
		return output.(int) == state.(int), state
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(op)
		if in.Write {
			return fmt.Sprintf("write %d via %s", in.V, in.Server)
		}
		return fmt.Sprintf("read %v via %s", output, in.Server)
	},
}

// workload writes the register through each server in turn (one client)
// and reads it through each server in turn (another), every period, until
// ctx ends. A write acknowledged is recorded with its return; one that
// failed may have been applied, and is recorded as never returning.
func workload(ctx context.Context, c *cluster, h *history, period time.Duration, t testing.TB) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 1; ctx.Err() == nil; i++ {
			s := c.servers[i%len(c.servers)]
			job := regJob(t, i)
			rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			call := h.now()
			_, err := s.api().Jobs().Register(rctx, job)
			ret := h.now()
			cancel()
			o := op{Client: 0, Server: s.name, Write: true, V: i, Call: call, Return: ret, Took: ret - call}
			if err != nil {
				o.Return, o.Err = math.MaxInt64, err.Error()
			}
			h.add(o)
			sleepCtx(ctx, period)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			s := c.servers[i%len(c.servers)]
			rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			call := h.now()
			job, _, err := s.api().Jobs().Info(rctx, "reg", nil)
			ret := h.now()
			cancel()
			switch {
			case apiclient.IsNotFound(err):
				h.add(op{Client: 1, Server: s.name, V: 0, Call: call, Return: ret, Took: ret - call})
			case err == nil:
				v, _ := strconv.Atoi(job.Meta["v"])
				h.add(op{Client: 1, Server: s.name, V: v, Call: call, Return: ret, Took: ret - call})
			default:
				// A failed read tells nothing of the register, but how
				// long it took is checked (slow).
				h.mu.Lock()
				h.failedReads = append(h.failedReads, op{Client: 1, Server: s.name, Call: call, Return: ret, Took: ret - call, Err: err.Error()})
				h.mu.Unlock()
			}
			sleepCtx(ctx, period)
		}
	}()
	return &wg
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// check runs the linearizability checker over the history and saves it
// under the cluster's directory; it returns the counts of writes
// acknowledged and attempted, of reads, and the checker's verdict.
//
// A write whose outcome is unknown (an error or a timeout) took effect, if
// it did, before the first read that returned its value: its return is
// that read's. One whose value no read returned is left out: had it taken
// effect, no read saw it, and the history without it is linearizable if
// and only if the history with it placed there is (etcd's robustness
// tests patch their histories likewise). Left pending for ever, a 30-minute
// run's hundreds of failed writes made the check time out.
func (h *history) check(t testing.TB, dir string) (acked, attempted, reads int, verdict string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, _ := json.MarshalIndent(h.ops, "", " ")
	_ = os.WriteFile(filepath.Join(dir, "history.json"), b, 0o644)
	firstRead := map[int]int64{} // value -> the earliest return of a read of it
	for _, o := range h.ops {
		if !o.Write && o.V > 0 {
			if r, ok := firstRead[o.V]; !ok || o.Return < r {
				firstRead[o.V] = o.Return
			}
		}
	}
	var ops []porcupine.Operation
	unseen := 0
	for _, o := range h.ops {
		var out interface{}
		ret := o.Return
		if !o.Write {
			out = o.V
			reads++
		} else {
			attempted++
			if o.Err == "" {
				acked++
			} else if r, ok := firstRead[o.V]; ok {
				ret = max(r, o.Call)
			} else {
				unseen++
				continue
			}
		}
		ops = append(ops, porcupine.Operation{ClientId: o.Client, Input: o, Call: o.Call, Output: out, Return: ret})
	}
	switch porcupine.CheckOperationsTimeout(registerModel, ops, 5*time.Minute) {
	case porcupine.Ok:
		verdict = fmt.Sprintf("linearizable (%d operations checked; %d failed writes no read saw left out)", len(ops), unseen)
	case porcupine.Illegal:
		verdict = "NOT linearizable"
		t.Errorf("the register's history is not linearizable (%d operations; see %s/history.json)", len(ops), dir)
	default:
		verdict = "not checked (the checker timed out)"
		t.Errorf("the linearizability check timed out over %d operations", len(ops))
	}
	return acked, attempted, reads, verdict
}

// slow returns the requests that took longer than d, leaving out those
// sent to a server while it was paused (which answers nothing until it
// goes on): a server cut off from the leader must answer within its hold
// and a little more, never hang.
func (h *history) slow(d time.Duration, windows []window) []op {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []op
	for _, o := range append(append([]op(nil), h.ops...), h.failedReads...) {
		took := time.Duration(o.Took)
		if took <= d {
			continue
		}
		call := h.t0.Add(time.Duration(o.Call))
		paused := false
		for _, w := range windows {
			if w.fault.Kind == "pause" && w.server == o.Server && !call.Add(took).Before(w.from) && call.Before(w.to) {
				paused = true
			}
		}
		if !paused {
			out = append(out, o)
		}
	}
	return out
}

// lastAcked returns the highest value of an acknowledged write.
func (h *history) lastAcked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	last := 0
	for _, o := range h.ops {
		if o.Write && o.Err == "" && o.V > last {
			last = o.V
		}
	}
	return last
}

// errorsDuring returns the distinct errors of the requests made while a
// fault of kind was in place, with how many times each was seen.
func (h *history) errorsDuring(windows []window, kind string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	seen := map[string]int{}
	var order []string
	for _, o := range append(append([]op(nil), h.ops...), h.failedReads...) {
		if o.Err == "" {
			continue
		}
		call := h.t0.Add(time.Duration(o.Call))
		for _, w := range windows {
			if w.fault.Kind == kind && !call.Before(w.from) && call.Before(w.to) {
				if seen[o.Err] == 0 {
					order = append(order, o.Err)
				}
				seen[o.Err]++
			}
		}
	}
	var out []string
	for _, e := range order {
		out = append(out, fmt.Sprintf("%dx %s", seen[e], e))
	}
	return out
}

// -history checks a history.json a run left (TestHistoryFile).
var historyFile = flag.String("history", "", "check the register history in this history.json and stop")

// TestHistoryFile runs the linearizability check over a history a run
// left: go test ./robustness -run TestHistoryFile -history <dir>/history.json.
func TestHistoryFile(t *testing.T) {
	if *historyFile == "" {
		t.Skip("run with -history")
	}
	b, err := os.ReadFile(*historyFile)
	if err != nil {
		t.Fatal(err)
	}
	h := &history{}
	if err := json.Unmarshal(b, &h.ops); err != nil {
		t.Fatal(err)
	}
	acked, attempted, reads, verdict := h.check(t, t.TempDir())
	t.Logf("writes: %d acknowledged of %d; reads: %d; %s", acked, attempted, reads, verdict)
}
