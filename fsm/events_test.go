package fsm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// drain reads every batch ready in s, one line per event:
// "index Type Topic:key [filter keys] (deleted)".
func drain(t *testing.T, s *stream.Subscription) []string {
	t.Helper()
	var out []string
	for {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		b, err := s.Next(ctx)
		if errors.Is(err, context.Canceled) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range b.Events {
			line := fmt.Sprintf("%d %s %s:%s", e.Index, e.Type, e.Topic, e.Key)
			if e.Topic != stream.TopicJob && e.Topic != stream.TopicNode {
				line += " " + strings.Join(e.FilterKeys, ",")
			}
			if e.Deleted {
				line += " (deleted)"
			}
			out = append(out, line)
		}
	}
}

// Each entry publishes the objects its transaction wrote, typed by the
// entry as Nomad's; refused entries, and entries of other kinds, publish
// nothing; a restore ends the subscriptions.
func TestEntriesPublishEvents(t *testing.T) {
	f := newTestFSM(t)
	buf := stream.NewBuffer(64)
	f.SetEvents(buf)
	sub := buf.Subscribe(stream.SubscribeRequest{Topics: map[stream.Topic][]string{stream.TopicAll: nil}, Namespace: "*"})
	defer sub.Close()

	node := statetest.Node("a")
	job := statetest.Job("web", 1)
	applyOK(t, f, 1, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	eval := statetest.Eval("register", job)
	applyOK(t, f, 2, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})
	stored, _ := snap(f).JobByID("default", "web")
	dep := statetest.Deployment(stored, 1)
	a := statetest.Alloc(stored, node, eval.ID, dep.ID, 0)
	a.Job = nil
	applyOK(t, f, 3, ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: eval.ID, Job: stored, Deployment: dep, AllocsPlaced: []*structs.Allocation{a}, UpdatedAt: statetest.T0.UnixNano(),
	})
	healthyAt := statetest.T0.Add(time.Minute)
	applyOK(t, f, 4, AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{
			ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: statetest.Bool(true), Timestamp: healthyAt},
		}},
		UpdatedAt: healthyAt.UnixNano(),
	})
	applyOK(t, f, 5, DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: structs.DeploymentStatusSuccessful},
		UpdatedAt:        healthyAt.UnixNano(),
	})
	// Refused: nothing written, nothing published.
	f.Apply(rawLog(6, entry(t, DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "missing", Status: structs.DeploymentStatusPaused},
	})))
	// Not a kind of entry with events.
	applyOK(t, f, 7, ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: "p", Rules: `node { policy = "read" }`}}})
	applyOK(t, f, 8, JobDeregisterRequestType, &structs.JobDeregisterRequest{Namespace: "default", JobID: "web", Purge: true})
	applyOK(t, f, 9, NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeIDs: []string{node.ID}})

	got := drain(t, sub)
	want := []string{
		"1 NodeRegistration Node:" + node.ID,
		"2 JobRegistered Job:web",
		"2 JobRegistered Evaluation:" + eval.ID + " web",
		"3 PlanResult Allocation:" + a.ID + " web," + dep.ID,
		"3 PlanResult Deployment:" + dep.ID + " web",
		"3 PlanResult Job:web",
		"4 AllocationUpdated Allocation:" + a.ID + " web," + dep.ID,
		"4 AllocationUpdated Deployment:" + dep.ID + " web",
		// The fixture's tasks each register a nomad service once running.
		"4 ServiceRegistration Service:_nomad-task-" + a.ID + "-server-server-svc-http server-svc",
		"4 ServiceRegistration Service:_nomad-task-" + a.ID + "-sidecar-sidecar-svc-http sidecar-svc",
		"5 DeploymentStatusUpdate Deployment:" + dep.ID + " web",
		"8 JobDeregistered Job:web (deleted)",
		"9 NodeDeregistration Node:" + node.ID + " (deleted)",
	}
	// Within one entry the order is the order of the writes, which is the
	// store's business: compare entry by entry as sets.
	norm := func(lines []string) []string {
		c := slices.Clone(lines)
		slices.Sort(c)
		return c
	}
	if !slices.Equal(norm(got), norm(want)) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The payload is the stored object.
	fresh := buf.Subscribe(stream.SubscribeRequest{Topics: map[stream.Topic][]string{stream.TopicAllocation: {a.ID}}, Index: 4})
	defer fresh.Close()
	b, err := fresh.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := b.Events[0].Payload.(*structs.Allocation); !ok || p.ClientStatus != structs.AllocClientStatusRunning || !p.IsHealthy() {
		t.Fatalf("payload %#v", b.Events[0].Payload)
	}

	// A restore resets the buffer.
	var snapBuf bytes.Buffer
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Persist(&memSink{Buffer: &snapBuf}); err != nil {
		t.Fatal(err)
	}
	if err := f.Restore(io.NopCloser(&snapBuf)); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Next(context.Background()); !errors.Is(err, stream.ErrBufferReset) {
		t.Fatalf("after restore: %v", err)
	}
}

// Without SetEvents nothing is tracked or published, and applying is
// otherwise the same.
func TestNoEventsWithoutBuffer(t *testing.T) {
	f := newTestFSM(t)
	applyOK(t, f, 1, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: statetest.Node("a")})
	if f.Events() != nil {
		t.Fatal("events without SetEvents")
	}
}

type memSink struct{ *bytes.Buffer }

func (memSink) ID() string    { return "mem" }
func (memSink) Cancel() error { return nil }
func (memSink) Close() error  { return nil }

var _ raft.SnapshotSink = memSink{}
