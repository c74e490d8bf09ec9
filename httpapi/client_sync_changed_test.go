package httpapi

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestAllocsSyncFromChangesMatchesFull runs random histories of a store's
// allocs (placements, the servers' updates and stops, the clients'
// reports, deletions, allocs restored from a snapshot of a build that did
// not stamp AllocModifyIndex) and, at every step, asks each node's sync
// from a client that holds an earlier answer, its digest sometimes wrong:
// whenever the answer from the changed allocs alone is given, it must be
// the full read's, field for field, and it must be given whenever the
// client is current and something changed past its index.
func TestAllocsSyncFromChangesMatchesFull(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	fast, asked, notCurrent, waited, fromMark := 0, 0, 0, 0, 0
	for history := 0; history < 60; history++ {
		st, err := state.New()
		if err != nil {
			t.Fatal(err)
		}
		nodes := []string{"n1", "n2", "n3"}
		marks := &syncMarks{}
		jobs := []*structs.Job{statetest.Job("web", 1), statetest.Job("api", 1)}
		jobs[1].Version = 3
		var ids []string
		next := 0
		newAlloc := func(node string) *structs.Allocation {
			next++
			job := jobs[r.IntN(len(jobs))]
			return &structs.Allocation{
				ID: fmt.Sprintf("%s-a%03d", []string{"x", "y", "z"}[r.IntN(3)], next), Namespace: structs.DefaultNamespace,
				JobID: job.ID, Job: job, TaskGroup: job.TaskGroups[0].Name, NodeID: node,
				DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
			}
		}
		// A few allocs restored as an earlier build stored them: no
		// AllocModifyIndex.
		rs := st.Restorer()
		for i := 0; i < r.IntN(4); i++ {
			a := newAlloc(nodes[r.IntN(len(nodes))])
			a.CreateIndex, a.ModifyIndex = 2, 2+uint64(i)
			if err := rs.Insert(state.TableAllocs, a); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
		}
		rs.Commit()

		index := uint64(10)
		var snaps []*state.Snapshot
		for step := 0; step < 60; step++ {
			index++
			snap := st.Snapshot()
			stored := func(id string) *structs.Allocation {
				a, err := snap.AllocByID(id)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			switch op := r.IntN(10); {
			case op < 3 || len(ids) == 0: // placements
				var placed []*structs.Allocation
				for range 1 + r.IntN(3) {
					a := newAlloc(nodes[r.IntN(len(nodes))])
					placed = append(placed, a)
					ids = append(ids, a.ID)
				}
				err = st.UpsertAllocs(index, placed, 1)
			case op < 6: // clients' reports
				var reports []*structs.Allocation
				for range 1 + r.IntN(3) {
					reports = append(reports, &structs.Allocation{ID: ids[r.IntN(len(ids))], ClientStatus: structs.AllocClientStatusRunning,
						ClientDescription: fmt.Sprint("step ", step)})
				}
				err = st.UpdateAllocsFromClient(index, &structs.AllocClientUpdateRequest{Allocs: reports, UpdatedAt: 1})
			case op < 8: // the servers stop or update one
				if a := stored(ids[r.IntN(len(ids))]); a != nil {
					c := a.Copy()
					if r.IntN(2) == 0 {
						c.DesiredStatus = structs.AllocDesiredStatusStop
					} else {
						c.DesiredDescription = fmt.Sprint("updated at ", step)
					}
					err = st.UpsertAllocs(index, []*structs.Allocation{c}, 1)
				}
			default: // the collector deletes one
				k := r.IntN(len(ids))
				err = st.Reap(index, &structs.EvalReapRequest{Allocs: []string{ids[k]}})
				ids = append(ids[:k], ids[k+1:]...)
			}
			if err != nil {
				t.Fatalf("history %d step %d: %v", history, step, err)
			}
			snaps = append(snaps, snap)
			now := st.Snapshot()
			for _, node := range nodes {
				// The client holds the full answer of an earlier
				// snapshot (or nothing), which the server remembers
				// unless another server gave it.
				q := syncQuery{store: st, marks: marks}
				var holds map[string]uint64
				// Mostly a recent one, as a client's last answer is.
				if k := len(snaps) - 1 - r.IntN(min(len(snaps), 4)); r.IntN(8) > 0 {
					before, err := (&syncQuery{store: st, marks: &syncMarks{}}).all(snaps[k], &nodeAllocsWatch{id: node})
					if err != nil {
						t.Fatal(err)
					}
					holds = before.Allocs
					q.req.Since = before.Index
					for id, ai := range before.Allocs {
						q.req.Known = q.req.Known.Add(id, ai)
					}
					if before.nodeDigest != q.req.Known {
						t.Fatalf("history %d step %d node %s: the answer's node digest %x, its allocs' %x", history, step, node, before.nodeDigest, q.req.Known)
					}
					if r.IntN(4) > 0 {
						marks.put(node, syncMark{store: st, index: before.Index, digest: before.nodeDigest})
					}
					if r.IntN(5) == 0 {
						q.req.Known++ // a client that lost track
					}
				}
				req := &q.req
				q.minIndex = req.Since
				if r.IntN(2) == 0 {
					q.held = heldIndex([]structs.JobRef{jobs[0].Ref()})
				}
				full, err := q.all(now, &nodeAllocsWatch{id: node})
				if err != nil {
					t.Fatal(err)
				}
				got, wait, err := q.changed(now, &nodeAllocsWatch{id: node})
				if err != nil {
					t.Fatal(err)
				}
				if wait {
					// The query waits past the client's index: so must the
					// full read's answer.
					waited++
					if got != nil || full.Index > req.Since || len(full.Changed) > 0 {
						t.Fatalf("history %d step %d node %s: waits past %d, but the full read answers %+v", history, step, node, req.Since, *full)
					}
					continue
				}
				asked++
				if !full.KnownCurrent {
					notCurrent++
				} else {
					// What the client makes of a current answer must be
					// the node's allocs: those it holds at or below its
					// index, replaced by the changed ones.
					present := map[string]uint64{}
					for id, ai := range holds {
						if ai <= req.Since {
							present[id] = ai
						}
					}
					for _, a := range full.Changed {
						present[a.ID] = a.ServersIndex()
					}
					truth, err := (&syncQuery{store: st, marks: &syncMarks{}}).all(now, &nodeAllocsWatch{id: node})
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(present, truth.Allocs) && len(present)+len(truth.Allocs) > 0 {
						t.Fatalf("history %d step %d node %s: a current client since %d makes %v of the answer, the node has %v", history, step, node, req.Since, present, truth.Allocs)
					}
					if req.Known != 0 && q.req.Known != full.nodeDigest {
						fromMark++
					}
				}
				entry, _ := now.NodeAllocsIndex(node)
				total, _, _ := now.NodeAllocsDigest(node)
				if full.KnownCurrent && entry != 0 && total != 0 && (len(full.Changed) > 0 || entry > req.Since) && got == nil {
					t.Fatalf("history %d step %d node %s: the client is current and the node changed past %d, but the answer was read in full", history, step, node, req.Since)
				}
				if got == nil {
					continue
				}
				fast++
				if !reflect.DeepEqual(got, full) {
					t.Fatalf("history %d step %d node %s since %d: from the changes:\n%+v\nfull read:\n%+v", history, step, node, req.Since, *got, *full)
				}
			}
		}
		// A restore recounts every node's digest as the writes kept it.
		dst, err := state.New()
		if err != nil {
			t.Fatal(err)
		}
		rs = dst.Restorer()
		src := st.Snapshot()
		for _, table := range state.Tables {
			if err := src.Each(table, func(obj any) error { return rs.Insert(table, obj) }); err != nil {
				t.Fatal(err)
			}
		}
		rs.Commit()
		for _, node := range nodes {
			kept, okKept, _ := src.NodeAllocsDigest(node)
			restored, okRestored, _ := dst.Snapshot().NodeAllocsDigest(node)
			allocs, _ := src.AllocsByNode(node)
			var want structs.AllocsDigest
			for _, a := range allocs {
				want = want.Add(a.ID, a.ServersIndex())
			}
			if okRestored && restored != want || okKept && kept != want || (len(allocs) > 0 && (!okKept || !okRestored)) {
				t.Fatalf("history %d node %s: digest kept %x (%t), restored %x (%t), of its allocs %x", history, node, kept, okKept, restored, okRestored, want)
			}
		}
	}
	t.Logf("%d syncs asked, %d answered from the changes, %d waited, %d clients not current, %d current by the server's last answer", asked, fast, waited, notCurrent, fromMark)
	// Most syncs asked find nothing changed past the client's index (a
	// real client's query would wait); the others must exercise both
	// paths.
	if fast < asked/10 || waited < asked/10 || notCurrent == 0 || fromMark == 0 {
		t.Fatalf("histories too tame: %d of %d answered from the changes, %d not current", fast, asked, notCurrent)
	}
}
