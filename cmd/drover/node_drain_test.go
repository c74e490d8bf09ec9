package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// drainBackend is a MemBackend that sets drains and eligibility as the
// leader does (without its drainer: the test plays that part).
type drainBackend struct{ *httpapi.MemBackend }

func (b drainBackend) UpdateNodeDrain(ctx context.Context, req httpapi.NodeDrainRequest) (*httpapi.NodeUpdateResponse, error) {
	w := &structs.NodeUpdateDrainRequest{NodeID: req.NodeID, MarkEligible: req.MarkEligible, Meta: req.Meta,
		UpdatedAt: statetest.T0.UnixNano()}
	if req.DrainSpec != nil {
		w.DrainStrategy = &structs.DrainStrategy{DrainSpec: *req.DrainSpec, StartedAt: statetest.T0}
		if req.DrainSpec.Deadline > 0 {
			w.DrainStrategy.ForceDeadline = statetest.T0.Add(req.DrainSpec.Deadline)
		}
		w.NodeEvents = []*structs.NodeEvent{{Message: structs.NodeDrainEventDrainSet, Subsystem: structs.NodeEventSubsystemDrain, Timestamp: statetest.T0}}
	}
	_, idx, err := b.Apply(ctx, fsm.NodeUpdateDrainRequestType, w)
	if err != nil {
		return nil, err
	}
	return &httpapi.NodeUpdateResponse{NodeModifyIndex: idx}, nil
}

func (b drainBackend) UpdateNodeEligibility(ctx context.Context, id, elig string) (*httpapi.NodeUpdateResponse, error) {
	_, idx, err := b.Apply(ctx, fsm.NodeUpdateEligibilityRequestType, &structs.NodeUpdateEligibilityRequest{NodeID: id, Eligibility: elig,
		NodeEvents: []*structs.NodeEvent{{Message: structs.NodeEligibilityEventEligible, Subsystem: structs.NodeEventSubsystemCluster, Timestamp: statetest.T0}}})
	if err != nil {
		return nil, err
	}
	return &httpapi.NodeUpdateResponse{NodeModifyIndex: idx}, nil
}

// newDrainCLI is newCLICluster over a drainBackend.
func newDrainCLI(t *testing.T) *cliCluster {
	t.Helper()
	mb := httpapi.NewMemBackend()
	mb.Now = func() time.Time { return statetest.T0 }
	srv := httptest.NewServer(httpapi.New(drainBackend{mb}, nil, httpapi.WithClock(mb.Now)).Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	old := statusClock
	statusClock = func() time.Time { return statetest.T0.Add(90 * time.Second) }
	t.Cleanup(func() { statusClock = old })
	c := &cliCluster{t: t, b: mb, addr: srv.URL, node: statetest.Node("n1")}
	c.apply(fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: c.node})
	return c
}

// Bad input exits 1 with a message and changes nothing.
func TestNodeDrainBadInput(t *testing.T) {
	c := newDrainCLI(t)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-enable", "-disable", c.node.ID}, "Either the '-enable' or '-disable' flag must be set"},
		{[]string{c.node.ID}, "Either the '-enable' or '-disable' flag must be set"},
		{[]string{"-enable"}, "This command takes one argument: <node-id>"},
		{[]string{"-enable", "nope"}, `No node(s) with prefix or id "nope" found`},
		{[]string{"-enable", "-deadline=-5m", c.node.ID}, "-deadline must be positive"},
		{[]string{"-enable", "-force", "-no-deadline", c.node.ID}, "-force and -no-deadline are mutually exclusive"},
		{[]string{"-enable", "-deadline", "5m", "-force", c.node.ID}, "-deadline can't be combined with -force or -no-deadline"},
		{[]string{"-disable", "-ignore-system", c.node.ID}, "-disable can't be combined with flags configuring drain strategy"},
		{[]string{"-enable", "-meta", "novalue", c.node.ID}, "-meta wants KEY=VALUE"},
	} {
		code, out, errs := runBounded(t, "", append([]string{"node", "drain", "-address", c.addr}, tc.args...)...)
		if code != 1 || !strings.Contains(out+errs, tc.msg) {
			t.Errorf("drover node drain %v: exit %d\n%s%s\nwant %q", tc.args, code, out, errs, tc.msg)
		}
	}
	for _, args := range [][]string{{"-enable", "-disable", c.node.ID}, {c.node.ID}, {"-enable"}} {
		code, out, errs := runBounded(t, "", append([]string{"node", "eligibility", "-address", c.addr}, args...)...)
		if code != 1 || !strings.Contains(out+errs, "Either the '-enable' or '-disable' flag must be set") && !strings.Contains(out+errs, "This command takes one argument") {
			t.Errorf("drover node eligibility %v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if n, _ := c.b.State().Snapshot().NodeByID(c.node.ID); n.DrainStrategy != nil || n.ModifyIndex != n.CreateIndex {
		t.Fatalf("bad input changed the node: %+v", n)
	}
}

// -detach sets the drain (Nomad's defaults: 1h deadline) and returns;
// -disable -keep-ineligible ends it leaving the node ineligible; node
// status shows the drain, the last drain and the events; eligibility
// makes the node eligible again.
func TestNodeDrainDetachDisableAndStatus(t *testing.T) {
	c := newDrainCLI(t)
	code, out, errs := runBounded(t, "", "node", "drain", "-address", c.addr, "-enable", "-detach", "-ignore-system", "-m", "kernel 6.12", c.node.ID[:8])
	if code != 0 || strings.TrimSpace(out) != `Node "`+c.node.ID+`" drain strategy set` {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	n, _ := c.b.State().Snapshot().NodeByID(c.node.ID)
	if d := n.DrainStrategy; d == nil || d.Deadline != time.Hour || !d.IgnoreSystemJobs || n.LastDrain.Meta["message"] != "kernel 6.12" {
		t.Fatalf("drain set %+v, last %+v", n.DrainStrategy, n.LastDrain)
	}
	code, out, _ = runBounded(t, "", "node", "status", "-address", c.addr, c.node.ID)
	for _, want := range []string{
		"= true; " + fmtTime(statetest.T0.Add(time.Hour)) + " deadline; ignoring system jobs",
		"= ineligible",
		`= draining, started ` + fmtTime(statetest.T0) + `, updated ` + fmtTime(statetest.T0) + `; "kernel 6.12"`,
		"Node Events", "Node drain strategy set", "Node registered",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("node status lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "Node drain strategy set") > strings.Index(out, "Node registered") {
		t.Errorf("events not newest first:\n%s", out)
	}

	code, out, errs = runBounded(t, "", "node", "drain", "-address", c.addr, "-disable", "-keep-ineligible", c.node.ID)
	if code != 0 || strings.TrimSpace(out) != `Node "`+c.node.ID+`" drain strategy unset` {
		t.Fatalf("disable: exit %d\n%s%s", code, out, errs)
	}
	n, _ = c.b.State().Snapshot().NodeByID(c.node.ID)
	if n.DrainStrategy != nil || n.SchedulingEligibility != structs.NodeSchedulingIneligible || n.LastDrain.Status != structs.DrainStatusCanceled {
		t.Fatalf("after -disable -keep-ineligible: %+v", n)
	}
	code, out, _ = runBounded(t, "", "node", "eligibility", "-address", c.addr, "-enable", c.node.ID)
	if code != 0 || strings.TrimSpace(out) != `Node "`+c.node.ID+`" scheduling eligibility set: eligible for scheduling` {
		t.Fatalf("eligibility: exit %d\n%s", code, out)
	}
	if n, _ = c.b.State().Snapshot().NodeByID(c.node.ID); n.SchedulingEligibility != structs.NodeSchedulingEligible {
		t.Fatalf("eligibility %s", n.SchedulingEligibility)
	}
}

// Without -detach the drain is monitored to its end: each alloc as it is
// marked, stopped and finished, the table of what is left, and Nomad's
// closing lines. The test plays the leader's drainer.
func TestNodeDrainMonitor(t *testing.T) {
	c := newDrainCLI(t)
	job := statetest.Job("web", 1)
	c.apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: statetest.Eval("reg", job), SubmitTime: 1})
	job = c.job("web")
	a := statetest.Alloc(job, c.node, "reg", "", 0)
	c.apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{a}, UpdatedAt: 1})
	c.apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning}}, UpdatedAt: 2})

	type result struct {
		code int
		out  string
	}
	var buf strings.Builder
	w := &lockedWriter{w: &buf}
	done := make(chan result, 1)
	go func() {
		code := run([]string{"node", "drain", "-address", c.addr, "-enable", "-yes", "-no-deadline", c.node.ID}, strings.NewReader(""), w, w)
		w.mu.Lock()
		defer w.mu.Unlock()
		done <- result{code, buf.String()}
	}()
	// The drainer's part, each step once the monitor has shown the one
	// before (its output is what the test waits on).
	waitOut := func(want string) {
		deadline := time.Now().Add(20 * time.Second)
		for {
			w.mu.Lock()
			got := buf.String()
			w.mu.Unlock()
			if strings.Contains(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %q in:\n%s", want, got)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitOut("web  web    1        0          0")
	c.apply(fsm.AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{a.ID: {Migrate: statetest.Bool(true)}}, UpdatedAt: 3})
	waitOut("web  web    1        1          0")
	c.apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Job: job, UpdatedAt: 4,
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: a.ID, DesiredDescription: structs.AllocMigrating}}})
	waitOut("web  web    1        0          1")
	c.apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete}}, UpdatedAt: 5})
	waitOut("have stopped")
	c.apply(fsm.NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{NodeID: c.node.ID, DrainComplete: true,
		DrainStartedAt: statetest.T0, UpdatedAt: 6})

	var r result
	select {
	case r = <-done:
	case <-time.After(cliTimeout):
		w.mu.Lock()
		defer w.mu.Unlock()
		t.Fatalf("the monitor did not return:\n%s", buf.String())
	}
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.out)
	}
	want := []string{
		`Node "` + c.node.ID + `" drain strategy set`,
		"Ctrl-C to stop monitoring: will not cancel the node drain",
		"Job  Group  On Node  Migrating  Moved",
		"web  web    1        0          0",
		`Alloc "` + a.ID + `" marked for migration`,
		"web  web    1        1          0",
		`Alloc "` + a.ID + `" draining`,
		"web  web    1        0          1",
		`Alloc "` + a.ID + `" status running -> complete`,
		"web  web    0        0          1",
		`All allocations on node "` + c.node.ID + `" have stopped`,
	}
	at := 0
	for _, w := range want {
		i := strings.Index(r.out[at:], w)
		if i < 0 {
			t.Fatalf("output lacks %q after position %d:\n%s", w, at, r.out)
		}
		at += i + len(w)
	}
	if !strings.Contains(r.out, "Drain complete for node "+c.node.ID) {
		t.Fatalf("output lacks the drain's completion:\n%s", r.out)
	}
}
