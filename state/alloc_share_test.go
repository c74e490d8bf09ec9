package state

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func runningReport(id string, events int) *structs.Allocation {
	st := &structs.TaskState{State: structs.TaskStateRunning, StartedAt: statetest.T0}
	for i := range events {
		msg := fmt.Sprintf("event %d", i)
		st.Events = append(st.Events, &structs.TaskEvent{Type: structs.TaskStarted, Time: int64(i), Message: msg, DisplayMessage: msg})
	}
	return &structs.Allocation{
		ID: id, ClientStatus: structs.AllocClientStatusRunning, ClientDescription: "Tasks are running",
		TaskStates: map[string]*structs.TaskState{"server": st},
	}
}

// placeTwo stores two allocs of one group (one plan) and returns them.
func placeTwo(t *testing.T, s *Store) (*structs.Job, *structs.Allocation, *structs.Allocation) {
	t.Helper()
	job := registerJob(t, s, 1, statetest.Job("web", 2))
	a := statetest.Alloc(job, statetest.Node("a"), "e1", "", 0)
	b := statetest.Alloc(job, statetest.Node("b"), "e1", "", 1)
	must(t, s.UpsertAllocs(2, []*structs.Allocation{a, b}, 10))
	return job, a, b
}

func stored(t *testing.T, s *Store, id string) *structs.Allocation {
	t.Helper()
	a := get[*structs.Allocation](t)(s.Snapshot().AllocByID(id))
	if a == nil {
		t.Fatalf("alloc %s not stored", id)
	}
	return a
}

func TestClientUpdateKeepsNewestEvents(t *testing.T) {
	s := newStore(t)
	_, a, _ := placeTwo(t, s)
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{runningReport(a.ID, 15)}}))
	events := stored(t, s, a.ID).TaskStates["server"].Events
	if len(events) != maxTaskEvents {
		t.Fatalf("%d events stored, want %d", len(events), maxTaskEvents)
	}
	for i, e := range events {
		if want := int64(15 - maxTaskEvents + i); e.Time != want || e.Message != fmt.Sprintf("event %d", want) {
			t.Fatalf("event %d = %d %q, want the event of time %d", i, e.Time, e.Message, want)
		}
	}
	// A report within the cap is kept whole.
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{runningReport(a.ID, 3)}}))
	if n := len(stored(t, s, a.ID).TaskStates["server"].Events); n != 3 {
		t.Fatalf("%d events stored, want 3", n)
	}
}

func TestClientUpdateCopiesTheRequest(t *testing.T) {
	s := newStore(t)
	_, a, _ := placeTwo(t, s)
	rep := runningReport(a.ID, 2)
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{rep}}))
	rep.TaskStates["server"].State = structs.TaskStateDead
	rep.TaskStates["server"].Events[0].Message = "changed by the caller"
	st := stored(t, s, a.ID).TaskStates["server"]
	if st.State != structs.TaskStateRunning || st.Events[0].Message != "event 0" {
		t.Fatalf("stored task state follows the caller's request: %+v %q", st, st.Events[0].Message)
	}
}

func TestClientUpdateKeepsEqualTaskState(t *testing.T) {
	s := newStore(t)
	_, a, _ := placeTwo(t, s)
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{runningReport(a.ID, 3)}}))
	first := stored(t, s, a.ID).TaskStates["server"]
	healthy := runningReport(a.ID, 3)
	healthy.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: statetest.Bool(true), Timestamp: statetest.T0}
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{healthy}}))
	if stored(t, s, a.ID).TaskStates["server"] != first {
		t.Fatal("an unchanged task state was stored again instead of kept")
	}
	must(t, s.UpdateAllocsFromClient(5, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{runningReport(a.ID, 4)}}))
	if got := stored(t, s, a.ID).TaskStates["server"]; got == first || len(got.Events) != 4 {
		t.Fatalf("a changed task state was not stored: %d events", len(got.Events))
	}
}

func TestUpdatesLeaveEarlierVersionsAlone(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 1))
	dep := statetest.Deployment(job, 0)
	must(t, s.update(2, func(tx *WriteTxn) error { return s.UpsertDeploymentTxn(tx, dep, 5) }))
	a := statetest.Alloc(job, statetest.Node("a"), "e1", dep.ID, 0)
	must(t, s.UpsertAllocs(3, []*structs.Allocation{a}, 10))
	before := s.Snapshot()
	rep := runningReport(a.ID, 1)
	rep.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: statetest.Bool(true), Timestamp: statetest.T0}
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{rep}}))
	must(t, s.stopAllocForTest(5, a.ID))
	old := get[*structs.Allocation](t)(before.AllocByID(a.ID))
	if old.DeploymentStatus == nil || old.DeploymentStatus.Healthy != nil || old.ClientStatus != structs.AllocClientStatusPending ||
		old.DesiredStatus != structs.AllocDesiredStatusRun || old.TaskStates != nil {
		t.Fatalf("an earlier snapshot's alloc changed: %+v", old)
	}
	now := stored(t, s, a.ID)
	if !now.IsHealthy() || now.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("stored alloc: healthy %v desired %s", now.IsHealthy(), now.DesiredStatus)
	}
}

// stopAllocForTest stops one alloc in its own transaction.
func (s *Store) stopAllocForTest(index uint64, id string) error {
	return s.update(index, func(t *WriteTxn) error {
		return s.StopAllocTxn(t, &structs.AllocStopUpdate{AllocID: id, DesiredDescription: structs.AllocNotNeeded}, 7)
	})
}

func TestSharedReservationIsNotAliased(t *testing.T) {
	s := newStore(t)
	_, a, b := placeTwo(t, s)
	sa, sb := stored(t, s, a.ID), stored(t, s, b.ID)
	if sa.AllocatedResources != sb.AllocatedResources {
		t.Fatal("equal reservations of one group in one transaction are not shared")
	}
	// An in-place update of a with more memory leaves b as it was.
	up := sa.Copy()
	up.AllocatedResources.Tasks["server"].Memory.MemoryMB = 999
	must(t, s.UpsertAllocs(3, []*structs.Allocation{up}, 20))
	if got := stored(t, s, a.ID).AllocatedResources.Tasks["server"].Memory.MemoryMB; got != 999 {
		t.Fatalf("a's memory = %d, want 999", got)
	}
	if got := stored(t, s, b.ID).AllocatedResources.Tasks["server"].Memory.MemoryMB; got != 300 {
		t.Fatalf("b's memory = %d after a's update, want 300", got)
	}
	// Reservations with ports are never shared.
	job := sa.Job
	c := statetest.Alloc(job, statetest.Node("c"), "e1", "", 2)
	d := statetest.Alloc(job, statetest.Node("c"), "e1", "", 3)
	for i, x := range []*structs.Allocation{c, d} {
		x.AllocatedResources.Shared.Ports = []structs.PortMapping{{Label: "http", Value: 20000 + i}}
	}
	must(t, s.UpsertAllocs(4, []*structs.Allocation{c, d}, 30))
	if stored(t, s, c.ID).AllocatedResources == stored(t, s, d.ID).AllocatedResources {
		t.Fatal("reservations with ports are shared")
	}
}

func TestAllocsShareStrings(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 2))
	n := statetest.Node("a")
	a := statetest.Alloc(job, n, "e1", "", 0)
	b := statetest.Alloc(job, n, "e1", "", 1)
	b.NodeName, b.TaskGroup = strings.Clone(a.NodeName), strings.Clone(a.TaskGroup)
	must(t, s.UpsertAllocs(2, []*structs.Allocation{a}, 10))
	must(t, s.UpsertAllocs(3, []*structs.Allocation{b}, 10))
	sa, sb := stored(t, s, a.ID), stored(t, s, b.ID)
	if unsafe.StringData(sa.NodeName) != unsafe.StringData(sb.NodeName) ||
		unsafe.StringData(sa.TaskGroup) != unsafe.StringData(sb.TaskGroup) {
		t.Fatal("equal node names and groups of two allocs are separate copies")
	}
	if sa.NodeName != n.Name || sb.TaskGroup != "web" {
		t.Fatalf("interned values changed: %q %q", sa.NodeName, sb.TaskGroup)
	}
}

func TestInternerStartsAgainWhenFull(t *testing.T) {
	in := newInterner()
	first := in.str(strings.Clone("x"))
	for i := range maxInterned {
		in.str(fmt.Sprint(i))
	}
	if len(in.m) > maxInterned {
		t.Fatalf("table holds %d strings, bound %d", len(in.m), maxInterned)
	}
	if got := in.str("x"); got != first {
		t.Fatalf("value changed: %q", got)
	}
}

func TestAllocsPointToTheStoredJob(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 2))
	same := job.Copy() // as a decoded plan entry carries it
	a := statetest.Alloc(same, statetest.Node("a"), "e1", "", 0)
	must(t, s.UpsertAllocs(2, []*structs.Allocation{a}, 10))
	if stored(t, s, a.ID).Job != get[*structs.Job](t)(s.Snapshot().JobByIDAndVersion("default", "web", 0)) &&
		stored(t, s, a.ID).Job != get[*structs.Job](t)(s.Snapshot().JobByID("default", "web")) {
		t.Fatal("an alloc with an equal copy of the stored job keeps its own copy")
	}
	other := job.Copy()
	other.Meta = map[string]string{"team": "b"} // same version and indexes, other content
	b := statetest.Alloc(other, statetest.Node("a"), "e1", "", 1)
	must(t, s.UpsertAllocs(3, []*structs.Allocation{b}, 10))
	if got := stored(t, s, b.ID).Job; got.Meta["team"] != "b" {
		t.Fatalf("an alloc's job was replaced by a different stored job: meta %v", got.Meta)
	}
}

func TestClientUpdateKeepsStoredEvents(t *testing.T) {
	s := newStore(t)
	_, a, _ := placeTwo(t, s)
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{runningReport(a.ID, 2)}}))
	before := stored(t, s, a.ID)
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{runningReport(a.ID, 3)}}))
	after := stored(t, s, a.ID).TaskStates["server"]
	if len(after.Events) != 3 || after.Events[0] != before.TaskStates["server"].Events[0] ||
		after.Events[1] != before.TaskStates["server"].Events[1] || after.Events[2].Message != "event 2" {
		t.Fatal("events already stored were copied again, or the new one is missing")
	}
	if n := len(before.TaskStates["server"].Events); n != 2 {
		t.Fatalf("the earlier version now has %d events, want 2", n)
	}
	// Past the cap the window slides: the kept events are still reused.
	must(t, s.UpdateAllocsFromClient(5, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{runningReport(a.ID, 10)}}))
	full := stored(t, s, a.ID).TaskStates["server"]
	must(t, s.UpdateAllocsFromClient(6, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{runningReport(a.ID, 11)}}))
	slid := stored(t, s, a.ID).TaskStates["server"]
	if slid.Events[0] != full.Events[1] || slid.Events[9].Message != "event 10" {
		t.Fatalf("after the cap: first event %q, last %q", slid.Events[0].Message, slid.Events[9].Message)
	}
	if full.Events[0].Message != "event 0" || len(full.Events) != 10 {
		t.Fatal("the earlier version changed")
	}
}

func TestRestoreSharesWithoutChangingTheSource(t *testing.T) {
	src := newStore(t)
	_, a, b := placeTwo(t, src)
	// Give b its own (equal) reservation object in the source store.
	must(t, src.update(3, func(tx *WriteTxn) error {
		old := stored(t, src, b.ID)
		c := rewrite(old)
		c.AllocatedResources = c.AllocatedResources.Copy()
		return tx.putAlloc(old, c)
	}))
	sa, sb := stored(t, src, a.ID), stored(t, src, b.ID)
	if sa.AllocatedResources == sb.AllocatedResources {
		t.Fatal("setup: reservations still shared")
	}
	dst := restoredCopy(t, src)
	da, db := stored(t, dst, a.ID), stored(t, dst, b.ID)
	if da.AllocatedResources != db.AllocatedResources {
		t.Fatal("restored allocs of one group do not share their equal reservation")
	}
	if stored(t, src, b.ID).AllocatedResources != sb.AllocatedResources || da == sa {
		t.Fatal("the restore changed or reused the source's objects")
	}
}

// TestAllocLookupsThroughTheJob reads an eval's and a deployment's
// allocations, which are found through their job's: exactly theirs, by
// ID, and for one no longer stored, by a scan of every allocation.
func TestAllocLookupsThroughTheJob(t *testing.T) {
	s := newStore(t)
	web := registerJob(t, s, 1, statetest.Job("web", 3))
	api := registerJob(t, s, 2, statetest.Job("api", 1))
	evals := get[[]*structs.Evaluation](t)(s.Snapshot().EvalsByJob("default", "web"))
	if len(evals) == 0 {
		t.Fatal("no eval stored for web")
	}
	ev := evals[0].ID
	d := statetest.Deployment(web, 0)
	must(t, s.update(3, func(tx *WriteTxn) error { return s.UpsertDeploymentTxn(tx, d, 0) }))
	n := statetest.Node("a")
	in := []*structs.Allocation{
		statetest.Alloc(web, n, ev, d.ID, 0),
		statetest.Alloc(web, n, ev, d.ID, 1),
		statetest.Alloc(web, n, "other-eval", "gone", 2),
		// Another job's alloc naming the eval and the deployment (never
		// written by the scheduler) is not theirs: not listed.
		statetest.Alloc(api, n, ev, d.ID, 0),
	}
	must(t, s.UpsertAllocs(4, in, 10))
	snap := s.Snapshot()
	for _, c := range []struct {
		name          string
		lookup        func(string) ([]*structs.Allocation, error)
		stored, other string
	}{
		{"eval", snap.AllocsByEval, ev, "other-eval"},
		{"deployment", snap.AllocsByDeployment, d.ID, "gone"},
	} {
		got := get[[]*structs.Allocation](t)(c.lookup(c.stored))
		if len(got) != 2 || got[0].ID >= got[1].ID {
			t.Fatalf("%s: %d allocs (want web's 0 and 1, by ID)", c.name, len(got))
		}
		for _, a := range got {
			if a.JobID != "web" || a.Index() > 1 {
				t.Fatalf("%s: unexpected alloc %s", c.name, a.Name)
			}
		}
		if got := get[[]*structs.Allocation](t)(c.lookup(c.other)); len(got) != 1 || got[0].Index() != 2 {
			t.Fatalf("%s not stored: %d allocs, want 1", c.name, len(got))
		}
	}
}

// An event that differs from the stored one only in its extra fields (a
// kill reason, say) is stored anew, not matched to the stored one.
func TestClientUpdateComparesEventExtras(t *testing.T) {
	s := newStore(t)
	_, a, _ := placeTwo(t, s)
	report := func(reason string) *structs.Allocation {
		r := runningReport(a.ID, 1)
		e := r.TaskStates["server"].Events[0]
		e.Type = structs.TaskKilling
		e.SetExtra().KillReason = reason
		return r
	}
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{report("first")}}))
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{report("second")}}))
	if got := stored(t, s, a.ID).TaskStates["server"].Events[0].KillReason; got != "second" {
		t.Fatalf("stored kill reason %q, want the reported one", got)
	}
}

// The placement's score of its node is stored without a map of its own,
// reads the same, and leaves the written alloc's metric alone.
func TestPlacementScoreStoredCompact(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 2))
	a := statetest.Alloc(job, statetest.Node("a"), "e1", "", 0)
	a.Metrics = &structs.AllocationMetric{NodesEvaluated: 2,
		Scores: map[string]float64{a.NodeID + structs.NormalizedScoreSuffix: 0.5}}
	must(t, s.UpsertAllocs(2, []*structs.Allocation{a}, 10))
	got := stored(t, s, a.ID).Metrics
	if got.Scores != nil || got.ScoreNode != a.NodeID || got.NodesEvaluated != 2 {
		t.Fatalf("stored metric %+v", got)
	}
	if sc, ok := got.PlacementScore(a.NodeID); !ok || sc != 0.5 {
		t.Fatalf("stored score %v %v", sc, ok)
	}
	if len(a.Metrics.Scores) != 1 || a.Metrics.ScoreNode != "" {
		t.Fatalf("the written alloc's metric changed: %+v", a.Metrics)
	}
	// A later write of the alloc (a stop in a plan) keeps it compact.
	stop := stored(t, s, a.ID).Copy()
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	must(t, s.UpsertAllocs(3, []*structs.Allocation{stop}, 11))
	if m := stored(t, s, a.ID).Metrics; m.Scores != nil || m.ScoreNode != a.NodeID || m.NodeScore != 0.5 {
		t.Fatalf("after a stop %+v", m)
	}
}
