package fsm

import (
	"context"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// An EvalUpdate that writes an evaluation with its blocked one publishes
// each as a frame of its own, at the entry's index, as Nomad's stream
// shows them (its servers write them in two entries).
func TestEvalUpdatePublishesAFramePerEvaluation(t *testing.T) {
	f := newTestFSM(t)
	buf := stream.NewBuffer(16)
	f.SetEvents(buf)
	sub := buf.Subscribe(stream.SubscribeRequest{Topics: map[stream.Topic][]string{stream.TopicEvaluation: nil}, Namespace: "*"})
	defer sub.Close()
	job := statetest.Job("web", 1)
	done := statetest.Eval("web-1", job)
	done.Status = structs.EvalStatusComplete
	blocked := statetest.Eval("web-2", job)
	blocked.Status = structs.EvalStatusBlocked
	done.BlockedEval = blocked.ID
	applyOK(t, f, 7, EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done, blocked}})
	for _, want := range []string{done.ID, blocked.ID} {
		b, err := sub.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b.Index != 7 || len(b.Events) != 1 || b.Events[0].Key != want {
			t.Fatalf("frame %+v, want one event of %s at 7", b, want)
		}
	}
}
