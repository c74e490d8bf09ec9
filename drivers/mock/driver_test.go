package mock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
)

const testTimeout = 10 * time.Second

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func cfg(name string, c map[string]any) *drivers.TaskConfig {
	return &drivers.TaskConfig{AllocID: "a1", TaskName: name, Config: c}
}

// exited returns the task's result if it has exited, without blocking.
func exited(t *testing.T, d *Driver, h *drivers.TaskHandle) (drivers.ExitResult, bool) {
	t.Helper()
	ch, err := d.Wait(h)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		return r, true
	default:
		return drivers.ExitResult{}, false
	}
}

func TestRunForAndExitCode(t *testing.T) {
	c := clock.NewFake(epoch)
	d := New(Options{Clock: c})
	h, err := d.Start(context.Background(), cfg("t", map[string]any{"run_for": "10s", "exit_code": float64(3)}))
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(9 * time.Second)
	if r, ok := exited(t, d, h); ok {
		t.Fatalf("exited early: %+v", r)
	}
	c.Advance(time.Second)
	r, ok := exited(t, d, h)
	if !ok || r.ExitCode != 3 || r.Successful() {
		t.Fatalf("after run_for: %+v exited=%v", r, ok)
	}
}

func TestRunUntilStopped(t *testing.T) {
	c := clock.NewFake(epoch)
	d := New(Options{Clock: c})
	h, err := d.Start(context.Background(), cfg("t", map[string]any{}))
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(1000 * time.Hour)
	if _, ok := exited(t, d, h); ok {
		t.Fatal("run_for 0 should run until stopped")
	}
	if err := d.Stop(h, time.Second, ""); err != nil {
		t.Fatal(err)
	}
	if r, ok := exited(t, d, h); !ok || !r.Successful() {
		t.Fatalf("after stop: %+v %v", r, ok)
	}
}

func TestStartErrorAndDelay(t *testing.T) {
	c := clock.NewFake(epoch)
	d := New(Options{Clock: c})
	errc := make(chan error, 1)
	go func() {
		_, err := d.Start(context.Background(), cfg("t", map[string]any{"start_delay": "2s", "start_error": "boom"}))
		errc <- err
	}()
	waitPending(t, c, 1)
	select {
	case err := <-errc:
		t.Fatalf("Start returned before start_delay: %v", err)
	default:
	}
	c.Advance(2 * time.Second)
	select {
	case err := <-errc:
		if !errors.Is(err, ErrStartError) || !errors.Is(err, drivers.ErrStartFailed) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Start did not return")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Start(ctx, cfg("t", map[string]any{"start_delay": "1h"})); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled start: %v", err)
	}
	if _, err := d.Start(context.Background(), cfg("t", map[string]any{"run_for": true})); !errors.Is(err, drivers.ErrInvalidConfig) {
		t.Fatalf("bad config: %v", err)
	}
}

// waitPending waits until the code under test has armed n timers.
func waitPending(t *testing.T, c *clock.Fake, n int) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for c.Pending() < n {
		if time.Now().After(deadline) {
			t.Fatalf("never reached %d pending timers", n)
		}
		runtime.Gosched()
	}
}

func TestKillAfter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		timeout  time.Duration
		wantSig  int
		advance  time.Duration
		wantCode int
	}{
		{"graceful", 10 * time.Second, 0, 3 * time.Second, 0},
		{"killed at timeout", time.Second, int(syscall.SIGKILL), time.Second, 137},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clock.NewFake(epoch)
			d := New(Options{Clock: c})
			h, err := d.Start(context.Background(), cfg("t", map[string]any{"kill_after": "3s"}))
			if err != nil {
				t.Fatal(err)
			}
			stopped := make(chan error, 1)
			go func() { stopped <- d.Stop(h, tc.timeout, "SIGINT") }()
			waitPending(t, c, 1)
			c.Advance(tc.advance - time.Millisecond)
			select {
			case <-stopped:
				t.Fatal("Stop returned too early")
			default:
			}
			c.Advance(time.Millisecond)
			select {
			case err := <-stopped:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(testTimeout):
				t.Fatal("Stop did not return")
			}
			r, _ := exited(t, d, h)
			if r.Signal != tc.wantSig || r.ExitCode != tc.wantCode {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

func TestRecover(t *testing.T) {
	c := clock.NewFake(epoch)
	d := New(Options{Clock: c})
	h, err := d.Start(context.Background(), cfg("t", map[string]any{"run_for": "1m", "exit_code": 2}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(h)
	var h2 drivers.TaskHandle
	if err := json.Unmarshal(b, &h2); err != nil {
		t.Fatal(err)
	}
	c.Advance(40 * time.Second)
	d2 := New(Options{Clock: c})
	if err := d2.Recover(&h2); err != nil {
		t.Fatal(err)
	}
	c.Advance(19 * time.Second)
	if _, ok := exited(t, d2, &h2); ok {
		t.Fatal("recovered task exited before its run_for")
	}
	c.Advance(time.Second)
	if r, ok := exited(t, d2, &h2); !ok || r.ExitCode != 2 {
		t.Fatalf("recovered task: %+v %v", r, ok)
	}
	if err := New(Options{Clock: c}).Recover(&h2); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("recover after run_for: %v", err)
	}
	if err := d2.Recover(&drivers.TaskHandle{Driver: "raw_exec", Config: h2.Config}); !errors.Is(err, drivers.ErrWrongDriver) {
		t.Fatalf("wrong driver: %v", err)
	}
}

// BenchmarkStartStop measures one mock task's start and stop.
func BenchmarkStartStop(b *testing.B) {
	d := New(Options{})
	ctx := context.Background()
	conf := map[string]any{"run_for": "0s"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h, err := d.Start(ctx, cfg(fmt.Sprint(i), conf))
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Stop(h, time.Second, ""); err != nil {
			b.Fatal(err)
		}
		if err := d.Destroy(h); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkRunningTaskMemory reports the heap held per running mock task
// (with a run_for timer armed), 10,000 tasks at a time.
func BenchmarkRunningTaskMemory(b *testing.B) {
	const n = 10000
	ctx := context.Background()
	conf := map[string]any{"run_for": "1h"}
	var perTask float64
	for b.Loop() {
		d := New(Options{})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		hs := make([]*drivers.TaskHandle, n)
		for i := range hs {
			h, err := d.Start(ctx, cfg(fmt.Sprint(i), conf))
			if err != nil {
				b.Fatal(err)
			}
			hs[i] = h
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perTask = float64(after.HeapAlloc-before.HeapAlloc) / n
		goroutines := runtime.NumGoroutine()
		for _, h := range hs {
			_ = d.Destroy(h)
		}
		b.ReportMetric(float64(goroutines), "goroutines")
	}
	b.ReportMetric(perTask, "bytes/task")
}
