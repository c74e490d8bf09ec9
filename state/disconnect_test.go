package state

import (
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestNodeDisconnectMarksAllocsUnknown: a node written disconnected marks
// the allocs of groups with lost_after (or replace = false, which stay
// so when the node goes down) unknown and the others lost, each
// change recorded in AllocStates at the request's time; a client report
// ends the unknown time; the node then going down makes what is still
// unknown lost. The restored copy of the store agrees.
func TestNodeDisconnectMarksAllocsUnknown(t *testing.T) {
	s := newStore(t)
	n := statetest.Node("a")
	must(t, s.UpsertNode(1, n))
	tolerant := statetest.Job("tolerant", 2)
	tolerant.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: time.Hour, Replace: true}
	tolerant = registerJob(t, s, 2, tolerant)
	plain := registerJob(t, s, 3, statetest.Job("plain", 1))
	kept := statetest.Job("kept", 1)
	kept.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{Replace: false}
	kept = registerJob(t, s, 4, kept)
	t0 := statetest.Alloc(tolerant, n, "e", "", 0)
	t1 := statetest.Alloc(tolerant, n, "e", "", 1)
	p0 := statetest.Alloc(plain, n, "e", "", 0)
	k0 := statetest.Alloc(kept, n, "e", "", 0)
	t0.FollowupEvalID = "stale"
	must(t, s.UpsertAllocs(4, []*structs.Allocation{t0, t1, p0, k0}, 100))

	disc := statetest.T0.Add(time.Minute)
	must(t, s.UpdateNodeStatus(5, &structs.NodeUpdateStatusRequest{
		NodeID: n.ID, Status: structs.NodeStatusDisconnected, UpdatedAt: disc.UnixNano(),
	}))
	snap := s.Snapshot()
	for _, c := range []struct {
		id, status string
	}{{t0.ID, structs.AllocClientStatusUnknown}, {t1.ID, structs.AllocClientStatusUnknown}, {p0.ID, structs.AllocClientStatusLost},
		{k0.ID, structs.AllocClientStatusUnknown}} {
		a := get[*structs.Allocation](t)(snap.AllocByID(c.id))
		at, ok := a.LastClientStatusAt(c.status)
		if a.ClientStatus != c.status || !ok || !at.Equal(disc) || a.ModifyIndex != 5 {
			t.Fatalf("%s: %s, states %+v", a.Name, a.ClientStatus, a.AllocStates)
		}
	}
	if a := get[*structs.Allocation](t)(snap.AllocByID(t0.ID)); a.FollowupEvalID != "" || a.ClientDescription != structs.AllocUnknown {
		t.Fatalf("unknown alloc kept follow-up %q, description %q", a.FollowupEvalID, a.ClientDescription)
	}

	back := disc.Add(5 * time.Minute)
	must(t, s.UpdateAllocsFromClient(6, &structs.AllocClientUpdateRequest{
		Allocs:    []*structs.Allocation{{ID: t0.ID, ClientStatus: structs.AllocClientStatusRunning}},
		UpdatedAt: back.UnixNano(),
	}))
	down := back.Add(time.Minute)
	must(t, s.UpdateNodeStatus(7, &structs.NodeUpdateStatusRequest{
		NodeID: n.ID, Status: structs.NodeStatusDown, UpdatedAt: down.UnixNano(),
	}))
	for _, st := range []*Store{s, restoredCopy(t, s)} {
		snap = st.Snapshot()
		a0 := get[*structs.Allocation](t)(snap.AllocByID(t0.ID))
		iv := a0.UnknownIntervals()
		if len(iv) != 1 || !iv[0][0].Equal(disc) || !iv[0][1].Equal(back) || a0.ClientStatus != structs.AllocClientStatusLost {
			t.Fatalf("reconnected alloc: %s intervals %v", a0.ClientStatus, iv)
		}
		if k := get[*structs.Allocation](t)(snap.AllocByID(k0.ID)); k.ClientStatus != structs.AllocClientStatusUnknown || len(k.AllocStates) != 1 {
			t.Fatalf("replace = false: %s %+v", k.ClientStatus, k.AllocStates)
		}
		a1 := get[*structs.Allocation](t)(snap.AllocByID(t1.ID))
		if at, _ := a1.LastClientStatusAt(structs.AllocClientStatusLost); a1.ClientStatus != structs.AllocClientStatusLost || !at.Equal(down) ||
			len(a1.UnknownIntervals()) != 1 || !a1.UnknownIntervals()[0][1].Equal(down) {
			t.Fatalf("still unknown at down: %s %+v", a1.ClientStatus, a1.AllocStates)
		}
	}
}
