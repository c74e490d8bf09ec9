package deployment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// withFigures returns obs as the watcher sees it when it does not read the
// allocations: the deployment carries the live figures the store would
// keep for obs.Allocs, and there are no allocations.
func withFigures(obs Observation) Observation {
	d := obs.Deployment.Copy()
	d.CountLiveFigures(obs.Allocs)
	obs.Deployment = d
	obs.Allocs = nil
	obs.FromFigures = true
	return obs
}

// TestDecideFromFiguresMatchesAllocs: for random deployments and
// allocations with no unhealthy one, Decide from the live figures gives
// the same decision as Decide from the allocations.
func TestDecideFromFiguresMatchesAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	compared := 0
	for i := range n {
		obs := randomObservation(r)
		for _, a := range obs.Allocs {
			if a.IsUnhealthy() {
				// No unhealthy alloc: the watcher would read them all.
				a.DeploymentStatus.Healthy = nil
			}
			if r.IntN(5) == 0 {
				a.ClientStatus = structs.AllocClientStatusComplete
			}
			a.ModifyIndex = uint64(r.IntN(20))
			if r.IntN(4) == 0 && a.IsCanary() {
				// Listed as a placed canary but no longer flagged.
				a.DeploymentStatus.Canary = false
			}
		}
		if r.IntN(3) == 0 {
			// Allocs of a group the deployment does not have count only
			// for the health index.
			obs.Allocs = append(obs.Allocs, &structs.Allocation{ID: fmt.Sprintf("x%d", i), TaskGroup: "gone",
				DeploymentID: obs.Deployment.ID, DesiredStatus: structs.AllocDesiredStatusRun,
				DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: boolp(true), ModifyIndex: uint64(r.IntN(25))}})
		}
		if NeedsAllocs(withFigures(obs).Deployment) {
			t.Fatalf("case %d: NeedsAllocs with no unhealthy allocation", i)
		}
		want, got := Decide(obs), Decide(withFigures(obs))
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("case %d: from allocs:\n%v\nfrom figures:\n%v", i, want, got)
		}
		if want.Changed() {
			compared++
		}
	}
	if compared < n/10 {
		t.Fatalf("only %d of %d cases decided anything: the test would prove little", compared, n)
	}
}

// TestNeedsAllocs: the allocations are needed exactly when one is, or was,
// unhealthy.
func TestNeedsAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *structs.DeploymentState
		want bool
	}{
		{"healthy", &structs.DeploymentState{HealthyAllocs: 3, LiveHealthyAllocs: 3}, false},
		{"marked unhealthy", &structs.DeploymentState{MarkedUnhealthyAllocs: 1}, true},
		{"counted unhealthy", &structs.DeploymentState{UnhealthyAllocs: 1}, true},
		{"nil group", nil, false},
	} {
		d := &structs.Deployment{TaskGroups: map[string]*structs.DeploymentState{"web": tc.s}}
		if got := NeedsAllocs(d); got != tc.want {
			t.Errorf("%s: NeedsAllocs = %v, want %v", tc.name, got, tc.want)
		}
	}
	if NeedsAllocs(nil) {
		t.Error("NeedsAllocs(nil)")
	}
}

// countingStore counts the reads of allocations: all of a deployment's,
// and one by ID.
type countingStore struct {
	*fakeStore
	allocReads, idReads atomic.Int64
}

func (c *countingStore) AllocsByDeployment(ws WatchSet, id string) ([]*structs.Allocation, error) {
	c.allocReads.Add(1)
	return c.fakeStore.AllocsByDeployment(ws, id)
}

func (c *countingStore) AllocByID(ws WatchSet, id string) (*structs.Allocation, error) {
	c.idReads.Add(1)
	return c.fakeStore.AllocByID(ws, id)
}

// TestWatcherReadsAllocsOnlyWhenUnhealthy: a pass over a deployment with
// no unhealthy allocation decides from its figures without reading the
// allocations; once one is unhealthy, that one is read by its ID (the
// store lists it) and replaced; a deployment whose unhealthy allocations
// are not listed (written before the list existed) is read whole.
func TestWatcherReadsAllocsOnlyWhenUnhealthy(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := &countingStore{fakeStore: seed(start, seedOpts{total: 3, rpb: 10 * time.Minute})}
	w, err := NewWatcher(Config{State: f, Writer: f.fakeStore, Clock: fixedClock{start.Add(time.Minute)},
		NewID: func() string { return "e" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f.setHealth("a2", true, start)
	w.RunOnce(ctx)
	if n, m := f.allocReads.Load(), f.idReads.Load(); n != 0 || m != 0 {
		t.Fatalf("%d deployment reads, %d alloc reads with every alloc healthy or pending", n, m)
	}
	wantWrites(t, f.fakeStore, "eval")

	f.setHealth("a3", false, start)
	w.RunOnce(ctx)
	if n, m := f.allocReads.Load(), f.idReads.Load(); n != 0 || m != 1 {
		t.Fatalf("%d deployment reads, %d alloc reads with one unhealthy alloc listed, want 0 and 1", n, m)
	}
	wantWrites(t, f.fakeStore, "eval", "reschedule")

	// Unlisted: the whole deployment is read.
	f.mu.Lock()
	for id, d := range f.deps {
		c := d.Copy()
		for _, s := range c.TaskGroups {
			s.UnhealthyAllocIDs = nil
		}
		f.deps[id] = c
	}
	f.mu.Unlock()
	w2, err := NewWatcher(Config{State: f, Writer: f.fakeStore, Clock: fixedClock{start.Add(time.Minute)},
		NewID: func() string { return "e" }})
	if err != nil {
		t.Fatal(err)
	}
	w2.RunOnce(ctx)
	if n := f.allocReads.Load(); n != 1 {
		t.Fatalf("%d deployment reads with an unlisted unhealthy alloc, want 1", n)
	}
}

// fixedClock is a Clock stopped at one time.
type fixedClock struct{ now time.Time }

func (c fixedClock) Now() time.Time { return c.now }

func (c fixedClock) NewTimer(d time.Duration) Timer { return RealClock{}.NewTimer(d) }
