package agent

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
)

// syncBuffer is a log output read while goroutines may write to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A shutdown step that never ends (a client whose task waits on
// something that never comes) holds the shutdown up to its timeout only:
// it is named in the log, the steps after it still run, within one more
// second, and the late ones are reported.
func TestShutdownStepsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &syncBuffer{}
		a := &Agent{logger: hclog.New(&hclog.LoggerOptions{Output: logs})}
		start := time.Now()
		s := &shutdownSteps{a: a, timeout: 30 * time.Second, deadline: start.Add(30 * time.Second)}
		never := make(chan struct{})
		defer close(never)
		ran := []string{}
		s.step("quick", func() { ran = append(ran, "quick") }, nil)
		s.step("client", func() { <-never }, func() []any { return []any{"allocations", []string{"a1"}} })
		if took := time.Since(start); took != 30*time.Second {
			t.Fatalf("the stuck step returned after %s, want the timeout, 30s", took)
		}
		s.step("raft", func() { ran = append(ran, "raft") }, nil)
		s.step("slow after", func() { <-never }, nil)
		if took := time.Since(start); took != 31*time.Second {
			t.Fatalf("the shutdown took %s, want 31s (the timeout and one more second)", took)
		}
		if strings.Join(ran, ",") != "quick,raft" || strings.Join(s.late, ",") != "client,slow after" {
			t.Fatalf("ran %v, late %v", ran, s.late)
		}
		out := logs.String()
		if !strings.Contains(out, "component=client") || !strings.Contains(out, `allocations=["a1"]`) ||
			!strings.Contains(out, `component="slow after"`) || strings.Contains(out, "component=raft") {
			t.Fatalf("log:\n%s", out)
		}
	})
}
