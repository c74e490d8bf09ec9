package fsm

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// snapshotRestore snapshots f and restores the stream into a fresh FSM, as
// a server that fell behind installs the leader's snapshot.
func snapshotRestore(t testing.TB, f *FSM) *FSM {
	t.Helper()
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	fs.Release()
	g := newTestFSM(t)
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	return g
}

// healthStep adds to logGen's mix the health entries a leader pause
// produces: a client's verdict repeated (its retry after the write timed
// out), repeated with another time, or contradicted in the same batch; a
// late verdict for an allocation that stopped or whose deployment ended;
// health marked by hand, healthy and unhealthy; and plans that update
// allocations in place, carrying the health they read (or none when they
// move the allocation to the job's latest deployment).
func (g *logGen) healthStep() {
	s := snap(g.f)
	allocs, _ := s.Allocs()
	a, ok := pick(g, allocs)
	if !ok {
		g.step()
		return
	}
	switch g.rng.IntN(5) {
	case 0, 1:
		u := &structs.Allocation{ID: a.ID, ClientStatus: a.ClientStatus}
		if g.rng.IntN(3) == 0 {
			u.ClientStatus = []string{"running", "complete", "failed"}[g.rng.IntN(3)]
		}
		ds := &structs.AllocDeploymentStatus{Healthy: statetest.Bool(g.rng.IntN(4) != 0), Timestamp: g.now()}
		if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil {
			// The stored verdict again, with its time or a later one.
			ds.Healthy = statetest.Bool(*a.DeploymentStatus.Healthy)
			if g.rng.IntN(2) == 0 {
				ds.Timestamp = a.DeploymentStatus.Timestamp
			}
		}
		u.DeploymentStatus = ds
		req := &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{u}, UpdatedAt: g.now().UnixNano()}
		if g.rng.IntN(3) == 0 {
			// The same report twice in one batch, or contradicted.
			v := *u
			v.DeploymentStatus = ds.Copy()
			if g.rng.IntN(2) == 0 {
				v.DeploymentStatus.Healthy = statetest.Bool(!*ds.Healthy)
			}
			req.Allocs = append(req.Allocs, &v)
		}
		g.emit(AllocClientUpdateRequestType, req)
	case 2:
		if a.DeploymentID == "" {
			return
		}
		req := &structs.DeploymentAllocHealthRequest{DeploymentID: a.DeploymentID, Timestamp: g.now()}
		if g.rng.IntN(2) == 0 {
			req.HealthyAllocationIDs = []string{a.ID}
		} else {
			req.UnhealthyAllocationIDs = []string{a.ID}
		}
		g.emit(DeploymentAllocHealthRequestType, req)
	default:
		job, _ := s.JobByID(a.Namespace, a.JobID)
		if job == nil || job.Stop {
			return
		}
		c := a.Copy()
		c.Job = nil
		if latest, _ := s.LatestDeploymentByJob(job.Namespace, job.ID); latest != nil && g.rng.IntN(2) == 0 {
			c.DeploymentID = latest.ID
		}
		if g.rng.IntN(4) == 0 && c.DeploymentStatus != nil {
			// Health the plan carries, not recorded yet.
			c.DeploymentStatus.ModifyIndex = 0
			c.DeploymentStatus.Healthy = statetest.Bool(true)
			c.DeploymentStatus.Timestamp = g.now().Add(-time.Second)
		}
		g.emit(ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: g.id("eval"), Job: job,
			AllocsUpdated: []*structs.Allocation{c}, UpdatedAt: g.now().UnixNano()})
	}
}

// TestRestoreDeterminism is the property a replicated state machine
// rests on, with snapshots in the way: a server that applied the whole
// log and one that was restored from snapshots taken at random points,
// applying only the entries after each, hold the same state, byte for
// byte (state.Snapshot.Dump: allocations, deployments with their live
// figures, job summaries, service registrations, indexes). The log mixes
// logGen's entries (job registrations, plans, client reports with health
// verdicts, deployment status updates, promotions, drains, reaps) with
// the health entries of healthStep.
func TestRestoreDeterminism(t *testing.T) {
	for seed := range uint64(restoreSeeds) {
		g := &logGen{t: t, f: newTestFSM(t), rng: rand.New(rand.NewPCG(seed, 36))}
		for len(g.log) < 300 {
			if g.rng.IntN(3) == 0 {
				g.healthStep()
			} else {
				g.step()
			}
		}
		rng := rand.New(rand.NewPCG(seed, 99))
		b := newTestFSM(t)
		restores := 0
		for i := 0; i < len(g.log); i++ {
			b.Apply(g.log[i])
			switch r := rng.IntN(60); {
			case r < 2:
				b = snapshotRestore(t, b)
				restores++
			case r < 3 && i+1 < len(g.log):
				// As raft: the snapshot taken at this entry is written
				// out while the FSM applies the next ones (Persist runs
				// concurrently with Apply), then restored on a restart,
				// and the entries after it are applied again.
				fs, err := b.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				k := min(len(g.log), i+1+rng.IntN(20))
				for _, l := range g.log[i+1 : k] {
					b.Apply(l)
				}
				var buf bytes.Buffer
				if err := fs.(*fsmSnapshot).write(&buf); err != nil {
					t.Fatal(err)
				}
				fs.Release()
				b = newTestFSM(t)
				if err := b.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
					t.Fatal(err)
				}
				restores++
			}
		}
		if da, db := dump(t, g.f), dump(t, b); da != db {
			t.Fatalf("seed %d: the server that applied the log and the one restored %d times differ:\n%s", seed, restores, firstDiff(da, db))
		}
	}
}

// restoreSeeds is how many logs TestRestoreDeterminism plays.
var restoreSeeds = 40
