package httpapi

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// stopRecorder is a backend whose StopAlloc records the options it got.
type stopRecorder struct {
	*fakeBackend
	got []structs.AllocStopOptions
}

func (b *stopRecorder) StopAlloc(_ context.Context, _ string, opts structs.AllocStopOptions) (*AllocStopResponse, error) {
	b.got = append(b.got, opts)
	return &AllocStopResponse{EvalID: "e", Index: 9}, nil
}

// An allocation stop reads Nomad's ?reschedule= and ?no_shutdown_delay=.
func TestAllocStopOptions(t *testing.T) {
	b := &stopRecorder{fakeBackend: newFakeBackend()}
	job := statetestJob("web")
	if _, _, err := b.Apply(context.Background(), fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Job: job,
		AllocsPlaced: []*structs.Allocation{{ID: "a1", Namespace: "default", JobID: "web", TaskGroup: "g", NodeID: "n1",
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning}}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(b, nil).Handler())
	t.Cleanup(srv.Close)
	for _, q := range []string{"", "?reschedule=true", "?no_shutdown_delay=true&reschedule=false"} {
		if code, body, _ := do(t, "PUT", srv.URL+"/v1/allocation/a1/stop"+q, ""); code != 200 {
			t.Fatalf("stop%s: %d %s", q, code, body)
		}
	}
	want := []structs.AllocStopOptions{{}, {Reschedule: true}, {NoShutdownDelay: true}}
	if len(b.got) != 3 || b.got[0] != want[0] || b.got[1] != want[1] || b.got[2] != want[2] {
		t.Fatalf("options %+v, want %+v", b.got, want)
	}
	if code, _, _ := do(t, "PUT", srv.URL+"/v1/allocation/a1/stop?reschedule=maybe", ""); code != 400 {
		t.Fatalf("reschedule=maybe: %d", code)
	}
}
