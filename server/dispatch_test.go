package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// parameterizedJob is a batch job dispatched with meta "k" required and
// "o" optional.
func parameterizedJob(id, payload string) *structs.Job {
	j := testJob(id, 1, 100)
	j.Type = structs.JobTypeBatch
	j.Update = nil
	j.TaskGroups[0].Update = nil
	j.Meta = map[string]string{"o": "parent", "keep": "yes"}
	j.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: payload, MetaRequired: []string{"k"}, MetaOptional: []string{"o"}}
	return j
}

// A parameterized job runs nothing and is running; a dispatch registers
// its child (minted ID, meta laid over the parent's, the payload) with an
// evaluation; the same idempotency token answers the same child.
func TestDispatch(t *testing.T) {
	h := newHarness(t)
	h.start()
	if _, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096)); err != nil {
		t.Fatal(err)
	}
	resp, err := h.leader.RegisterJob(h.ctx, parameterizedJob("enc", structs.DispatchPayloadOptional))
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID != "" {
		t.Fatalf("a parameterized job got an evaluation %s", resp.EvalID)
	}
	snap := h.store().Snapshot()
	if parent, _ := snap.JobByID("default", "enc"); parent.Status != structs.JobStatusRunning {
		t.Fatalf("parent status %q", parent.Status)
	}

	out, err := h.leader.Dispatch(h.ctx, DispatchRequest{JobID: "enc", Meta: map[string]string{"k": "v", "o": "child"},
		Payload: []byte("hello"), IdempotencyToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	prefix := "enc" + structs.DispatchLaunchSuffix
	if !strings.HasPrefix(out.DispatchedJobID, prefix) || len(out.DispatchedJobID) != len(prefix)+len("1764590400-")+8 || out.EvalID == "" || out.JobCreateIndex == 0 {
		t.Fatalf("dispatch answer %+v", out)
	}
	snap = h.store().Snapshot()
	child, _ := snap.JobByID("default", out.DispatchedJobID)
	if child == nil || child.ParentID != "enc" || !child.Dispatched || child.IsParameterized() || string(child.Payload) != "hello" ||
		child.Meta["k"] != "v" || child.Meta["o"] != "child" || child.Meta["keep"] != "yes" || child.DispatchIdempotencyToken != "tok" {
		t.Fatalf("child %+v", child)
	}
	if ev, _ := snap.EvalByID(out.EvalID); ev == nil || ev.JobID != child.ID {
		t.Fatalf("child's evaluation %+v", ev)
	}
	h.waitFor("the child placed", func(s *state.Snapshot) bool { return len(allocsOf(s, child.ID)) == 1 })

	again, err := h.leader.Dispatch(h.ctx, DispatchRequest{JobID: "enc", Meta: map[string]string{"k": "other"}, IdempotencyToken: "tok"})
	if err != nil || again.DispatchedJobID != out.DispatchedJobID || again.EvalID != "" {
		t.Fatalf("same token: %+v %v", again, err)
	}
	if kids := children(h.store().Snapshot(), "enc"); len(kids) != 1 {
		t.Fatalf("children %v", kids)
	}
	if len(allocsOf(h.store().Snapshot(), "enc")) != 0 {
		t.Fatal("the parent was placed")
	}
}

// What Nomad refuses is refused, naming the field, and writes nothing.
func TestDispatchRefused(t *testing.T) {
	h := newHarness(t)
	h.start()
	for _, j := range []*structs.Job{parameterizedJob("req", structs.DispatchPayloadRequired),
		parameterizedJob("forb", structs.DispatchPayloadForbidden), testJob("plain", 1, 100)} {
		if _, err := h.leader.RegisterJob(h.ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	meta := map[string]string{"k": "v"}
	for _, c := range []struct {
		req  DispatchRequest
		want string
	}{
		{DispatchRequest{JobID: "req", Meta: meta}, "Payload is required"},
		{DispatchRequest{JobID: "forb", Meta: meta, Payload: []byte("x")}, "Payload is not allowed"},
		{DispatchRequest{JobID: "req", Meta: meta, Payload: make([]byte, structs.DispatchPayloadSizeLimit+1)}, "Payload exceeds the maximum size: 16385 > 16384"},
		{DispatchRequest{JobID: "req", Payload: []byte("x")}, `Meta: the dispatch did not give the required meta keys "k"`},
		{DispatchRequest{JobID: "req", Payload: []byte("x"), Meta: map[string]string{"k": "v", "zz": "1"}}, `Meta: the dispatch gave meta keys the job does not allow ("zz")`},
		{DispatchRequest{JobID: "plain"}, "is not a parameterized job"},
	} {
		_, err := h.leader.Dispatch(h.ctx, c.req)
		if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.req.JobID, err, c.want)
		}
	}
	if _, err := h.leader.Dispatch(h.ctx, DispatchRequest{JobID: "nope"}); !errors.Is(err, ErrJobNotFound) {
		t.Errorf("unknown job: %v", err)
	}
	if kids := children(h.store().Snapshot(), "req"); len(kids) != 0 {
		t.Fatalf("refused dispatches made children %v", kids)
	}
	// The largest payload passes.
	if _, err := h.leader.Dispatch(h.ctx, DispatchRequest{JobID: "req", Meta: meta, Payload: make([]byte, structs.DispatchPayloadSizeLimit)}); err != nil {
		t.Fatal(err)
	}
}

// A periodic parameterized job launches nothing itself; its dispatched
// child is a periodic job with no evaluation of its own, as Nomad's.
func TestDispatchPeriodic(t *testing.T) {
	h := newHarness(t)
	h.start()
	j := parameterizedJob("pp", structs.DispatchPayloadOptional)
	j.Periodic = &structs.PeriodicConfig{Enabled: true, SpecType: structs.PeriodicSpecCron, Specs: []string{"* * * * *"}}
	if _, err := h.leader.RegisterJob(h.ctx, j); err != nil {
		t.Fatal(err)
	}
	if j.IsPeriodicActive() {
		t.Fatal("a periodic parameterized parent is active")
	}
	out, err := h.leader.Dispatch(h.ctx, DispatchRequest{JobID: "pp", Meta: map[string]string{"k": "v"}})
	if err != nil || out.EvalID != "" {
		t.Fatalf("dispatch %+v %v", out, err)
	}
	child, _ := h.store().Snapshot().JobByID("default", out.DispatchedJobID)
	if !child.IsPeriodicActive() || child.Status != structs.JobStatusRunning {
		t.Fatalf("child %+v", child)
	}
}

// Dispatches at once with one token make one child.
func TestDispatchTokenConcurrent(t *testing.T) {
	h := newHarness(t)
	h.start()
	if _, err := h.leader.RegisterJob(h.ctx, parameterizedJob("enc", structs.DispatchPayloadOptional)); err != nil {
		t.Fatal(err)
	}
	ids := make(chan string, 8)
	for range 8 {
		go func() {
			out, err := h.leader.Dispatch(h.ctx, DispatchRequest{JobID: "enc", Meta: map[string]string{"k": "v"}, IdempotencyToken: "same"})
			if err != nil {
				ids <- "error: " + err.Error()
				return
			}
			ids <- out.DispatchedJobID
		}()
	}
	first := <-ids
	for range 7 {
		if id := <-ids; id != first {
			t.Fatalf("children %s and %s", first, id)
		}
	}
	if kids := children(h.store().Snapshot(), "enc"); len(kids) != 1 {
		t.Fatalf("children %v", kids)
	}
}
