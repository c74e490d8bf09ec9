package evalbroker_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/structs"
)

// newBroker returns an enabled broker on clk with no nack delays, a
// delivery limit of 3 and a 30s visibility timeout, adjusted by mods.
func newBroker(t *testing.T, clk evalbroker.Clock, mods ...func(*evalbroker.Config)) *evalbroker.Broker {
	t.Helper()
	cfg := evalbroker.DefaultConfig()
	cfg.Clock = clk
	cfg.InitialNackDelay = 0
	cfg.SubsequentNackDelay = 0
	cfg.VisibilityTimeout = 30 * time.Second
	for _, m := range mods {
		m(&cfg)
	}
	b, err := evalbroker.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b.SetEnabled(true)
	return b
}

// mkEval returns a pending service evaluation.
func mkEval(id, job string, priority int, createIndex uint64) *structs.Evaluation {
	return &structs.Evaluation{
		ID:          id,
		Namespace:   "default",
		Priority:    priority,
		Type:        "service",
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       job,
		Status:      structs.EvalStatusPending,
		CreateIndex: createIndex,
	}
}

// tryDequeue dequeues with a short deadline and returns nil when nothing is
// ready. Tests run inside a synctest bubble, so the deadline costs no time.
func tryDequeue(t *testing.T, b *evalbroker.Broker, types ...string) (*structs.Evaluation, string) {
	t.Helper()
	if len(types) == 0 {
		types = []string{"service"}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	e, token, err := b.Dequeue(ctx, types)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, ""
	}
	if err != nil {
		t.Fatalf("Dequeue: %v", err)
	}
	return e, token
}

// mustDequeue dequeues and checks the evaluation's ID.
func mustDequeue(t *testing.T, b *evalbroker.Broker, wantID string, types ...string) string {
	t.Helper()
	e, token := tryDequeue(t, b, types...)
	if e == nil {
		t.Fatalf("Dequeue: nothing ready, want %s", wantID)
	}
	if e.ID != wantID {
		t.Fatalf("Dequeue: got %s, want %s", e.ID, wantID)
	}
	return token
}

// expectEmpty checks that nothing is ready.
func expectEmpty(t *testing.T, b *evalbroker.Broker, types ...string) {
	t.Helper()
	if e, _ := tryDequeue(t, b, types...); e != nil {
		t.Fatalf("Dequeue: got %s, want nothing ready", e.ID)
	}
}

func mustEnqueue(t *testing.T, b *evalbroker.Broker, evals ...*structs.Evaluation) {
	t.Helper()
	for _, e := range evals {
		if err := b.Enqueue(e); err != nil {
			t.Fatalf("Enqueue %s: %v", e.ID, err)
		}
	}
}

// recorder collects callback arguments.
type recorder struct {
	mu        sync.Mutex
	cancelled []string
	failed    []string
}

func (r *recorder) onCancel(evals []*structs.Evaluation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range evals {
		r.cancelled = append(r.cancelled, e.ID)
	}
}

func (r *recorder) onFailed(e *structs.Evaluation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, e.ID)
}

func (r *recorder) wire(c *evalbroker.Config) {
	c.OnCancel = r.onCancel
	c.OnFailed = r.onFailed
}

func (r *recorder) snapshot() (cancelled, failed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.cancelled...), append([]string(nil), r.failed...)
}
