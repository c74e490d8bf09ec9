package scheduler

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/droverhq/drover/structs"
)

// liveInput returns in as a server's worker builds it: without the allocs
// the servers stopped or evicted, with StoppedRanVersion set from them.
func liveInput(in Input) Input {
	var live, stopped []*structs.Allocation
	for _, a := range in.Allocs {
		if a != nil && (a.DesiredStatus == structs.AllocDesiredStatusStop || a.DesiredStatus == structs.AllocDesiredStatusEvict) {
			stopped = append(stopped, a)
			continue
		}
		live = append(live, a)
	}
	in.Allocs = live
	in.StoppedRanVersion = in.StoppedRanVersion || !RanVersion(live, in.Job) && RanVersion(stopped, in.Job)
	return in
}

// checkLiveEquivalent asserts that Reconcile plans the same from the live
// allocs alone as from all of them. Both passes mint IDs from a counter
// starting at 0.
func checkLiveEquivalent(t testing.TB, what string, in Input) {
	t.Helper()
	ids := func() func() string {
		n := 0
		return func() string { n++; return fmt.Sprintf("eq%d", n) }
	}
	in.IDs = ids()
	all := Reconcile(in)
	li := liveInput(in)
	li.IDs = ids()
	live := Reconcile(li)
	if all.String() != live.String() || !reflect.DeepEqual(all, live) {
		t.Fatalf("%s: the plan from the live allocs differs from the plan from all of them\nall:\n%s\nlive only:\n%s", what, all, live)
	}
}

// TestReconcileLiveAllocsSuffice: a worker gives the reconciler only the
// job's live allocs; on random worlds (allocs of both versions in every
// state, the servers' stopped ones among them) the plan is the one all of
// them give.
func TestReconcileLiveAllocsSuffice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	stoppedSeen := 0
	for i := 0; i < 3000; i++ {
		in := randomWorld(r)
		for _, a := range in.Allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusStop {
				stoppedSeen++
			}
		}
		checkLiveEquivalent(t, fmt.Sprintf("case %d\n%s", i, dumpInput(in)), in)
	}
	if stoppedSeen == 0 {
		t.Fatal("no random world had a stopped alloc: the test proves nothing")
	}
}

// TestRanVersionFromStopped: the first pass of a version that ran before
// (its only allocs were stopped, here lost with their node) places without
// a new deployment, whether the stopped allocs are given or only the flag.
func TestRanVersionFromStopped(t *testing.T) {
	job := baseJob()
	job.TaskGroups[0].Count = 1
	lost := &structs.Allocation{
		ID: "a0", Name: structs.AllocName(job.ID, "web", 0), JobID: job.ID, Job: job, TaskGroup: "web",
		NodeID: "gone", DesiredStatus: structs.AllocDesiredStatusStop, ClientStatus: structs.AllocClientStatusLost,
	}
	in := Input{Job: job, Allocs: []*structs.Allocation{lost}, Nodes: []*structs.Node{testNode("n0", "ready")}, Now: baseTime, EvalID: "e"}
	checkLiveEquivalent(t, "lost alloc of the current version", in)
	li := liveInput(in)
	if len(li.Allocs) != 0 || !li.StoppedRanVersion {
		t.Fatalf("live input: %d allocs, StoppedRanVersion %v", len(li.Allocs), li.StoppedRanVersion)
	}
	n := 0
	li.IDs = func() string { n++; return fmt.Sprint("id", n) }
	p := Reconcile(li)
	if len(p.Place) != 1 || p.Deployment != nil {
		t.Fatalf("want one placement and no new deployment, got %d placements, deployment %v", len(p.Place), p.Deployment)
	}
	li.StoppedRanVersion = false
	if p := Reconcile(li); p.Deployment == nil {
		t.Fatal("without the flag a first placement starts a deployment; the test proves nothing")
	}
}
