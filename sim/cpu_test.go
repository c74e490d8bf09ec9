package sim

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and a parenthesis; utime 250, stime 50.
	line := "4242 (drover (x) y) S 1 4242 4242 0 -1 4194560 1500 0 0 0 250 50 0 0 20 0 12 0 100 0 0\n"
	got, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("CPU time %v, want %v", got, want)
	}
	for _, bad := range []string{"", "4242 drover S 1", "4242 (drover) S 1 2 3", "4242 (d) S 1 4242 4242 0 -1 4194560 1500 0 0 0 x 50 0"} {
		if _, err := parseProcStat(bad); !errors.Is(err, ErrNoCPUTime) {
			t.Errorf("%q: error %v, want ErrNoCPUTime", bad, err)
		}
	}
}

func TestParseMachineTimes(t *testing.T) {
	stat := "cpu  100 5 30 800 20 1 2 42 7 0\ncpu0 50 2 15 400 10 0 1 21 0 0\nintr 1 2\n"
	got, err := parseMachineTimes(strings.NewReader(stat))
	if err != nil {
		t.Fatal(err)
	}
	// Guest time (7) is already in user; steal (42) counts as busy.
	if want := (machineTimes{total: 100 + 5 + 30 + 800 + 20 + 1 + 2 + 42, idle: 820}); got != want {
		t.Errorf("times %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4\n", "cpu  1 2\n", "cpu  1 2 x 4\n"} {
		if _, err := parseMachineTimes(strings.NewReader(bad)); !errors.Is(err, ErrNoCPUTime) {
			t.Errorf("%q: error %v, want ErrNoCPUTime", bad, err)
		}
	}
}

// TestCPUMeterCountsThisProcess burns CPU between the meter's two reads
// until this process's share shows at least 50 ms (the tick is 10 ms).
func TestCPUMeterCountsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	m := startCPUMeter(nil)
	deadline := time.Now().Add(10 * time.Second)
	var seen time.Duration
	for seen < 50*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("10 s of spinning counted as %v of this process's CPU time", seen)
		}
		x := 0
		for i := range 1_000_000 {
			x ^= i * i
		}
		_ = x
		u, err := m.stop()
		if err != nil {
			t.Fatal(err)
		}
		if u.servers != 0 || u.measured != 0 {
			t.Fatalf("servers measured with none given: %+v", u)
		}
		if u.busy < 0 || u.busy > 1 {
			t.Fatalf("machine busy %v, want within [0, 1]", u.busy)
		}
		seen = u.self
	}
}
