package fsm

import (
	"bytes"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// Scaling events are written with a count change or alone, stamped with
// the entry's index, and carried by snapshots.
func TestScalingEventsAreAppliedAndSnapshotted(t *testing.T) {
	f := newTestFSM(t)
	job := statetest.Job("web", 2)
	applyOK(t, f, 1, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	scaled := job.Copy()
	scaled.TaskGroups[0].Count = 4
	four := int64(4)
	applyOK(t, f, 2, JobRegisterRequestType, &structs.JobRegisterRequest{Job: scaled, Scaling: &structs.ScalingEventRequest{
		JobID: "web", TaskGroup: "web", Event: &structs.ScalingEvent{Time: 7, Count: &four, PreviousCount: 2}}})
	applyOK(t, f, 3, ScalingEventRequestType, &structs.ScalingEventRequest{
		JobID: "web", TaskGroup: "web", Event: &structs.ScalingEvent{Time: 8, Error: true, Message: "boom"}})
	got, _ := snap(f).ScalingEventsByJob("default", "web")
	if got == nil || len(got.ScalingEvents["web"]) != 2 || got.ScalingEvents["web"][0].CreateIndex != 3 ||
		got.ScalingEvents["web"][1].CreateIndex != 2 || *got.ScalingEvents["web"][1].Count != 4 {
		t.Fatalf("events %+v", got)
	}
	// An event of a job that does not exist is refused.
	resp := f.Apply(&raft.Log{Index: 4, Type: raft.LogCommand, Data: entry(t, ScalingEventRequestType, &structs.ScalingEventRequest{
		JobID: "nope", TaskGroup: "web", Event: &structs.ScalingEvent{Message: "x"}})})
	if _, ok := resp.(error); !ok {
		t.Fatalf("an event of an unknown job was applied: %v", resp)
	}

	var buf bytes.Buffer
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	g := newTestFSM(t)
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, f), dump(t, g); a != b {
		t.Fatalf("restored state differs:\n%s", firstDiff(a, b))
	}
}
