package client

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// syncServer is the fakeServer with the servers' allocs-sync: the index
// and the allocs changed past since in one answer, without the index
// when the agent's digest of what it holds at or below since matches the
// servers' (KnownCurrent).
type syncServer struct {
	*fakeServer
	current atomic.Int64 // answers that matched the agent's digest
}

func (s *syncServer) AllocsSync(ctx context.Context, nodeID string, since uint64, known structs.AllocsDigest, held []*structs.Job, minIndex uint64, wait time.Duration) (*apiclient.NodeAllocsSync, uint64, error) {
	m, idx, err := s.AllocsIndex(ctx, nodeID, minIndex, wait)
	if err != nil {
		return nil, 0, err
	}
	var ids []string
	var d structs.AllocsDigest
	for id, i := range m {
		if i > since {
			ids = append(ids, id)
		} else {
			d = d.Add(id, i)
		}
	}
	changed, err := s.GetAllocs(ctx, ids, held, 0, 0)
	if err != nil {
		return nil, 0, err
	}
	out := &apiclient.NodeAllocsSync{Changed: changed}
	if known != 0 && d == known {
		out.KnownCurrent = true
		s.current.Add(1)
	} else {
		out.Allocs = m
	}
	return out, idx, nil
}

// With the servers' allocs-sync, the agent follows its allocs from
// answers that carry only what changed: new ones start, a stopped one is
// killed, a dropped one is collected, and those left run on.
func TestAllocsSyncFollowsTheServers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &syncServer{fakeServer: newFakeServer()}
		data := t.TempDir()
		a, stop := startAgent(t, srv, data)
		defer stop()
		synctest.Wait()
		for _, id := range []string{"stopme", "dropme", "keepme"} {
			srv.put(serviceAlloc(id, a.NodeID(), "", 0))
			time.Sleep(reportWindow)
			synctest.Wait()
		}
		srv.put(serviceAlloc("notmine", "other-node", "", 0))
		time.Sleep(reportWindow)
		synctest.Wait()
		for _, id := range []string{"stopme", "dropme", "keepme"} {
			if s := srv.alloc(id).ClientStatus; s != structs.AllocClientStatusRunning {
				t.Fatalf("%s is %s", id, s)
			}
		}
		srv.change("stopme", func(al *structs.Allocation) {
			al.DesiredStatus, al.DesiredDescription = structs.AllocDesiredStatusStop, structs.AllocNotNeeded
		})
		srv.remove("dropme")
		srv.put(serviceAlloc("newone", a.NodeID(), "", 0))
		time.Sleep(reportWindow)
		synctest.Wait()
		if s := srv.alloc("stopme").ClientStatus; s != structs.AllocClientStatusComplete {
			t.Fatalf("stopped alloc is %s", s)
		}
		for _, id := range []string{"keepme", "newone"} {
			if s := srv.alloc(id).ClientStatus; s != structs.AllocClientStatusRunning {
				t.Fatalf("%s is %s", id, s)
			}
		}
		if _, err := os.Stat(filepath.Join(data, "alloc", "dropme")); !os.IsNotExist(err) {
			t.Fatalf("dropped alloc's dir still there: %v", err)
		}
		a.mu.Lock()
		var ids []string
		for id := range a.allocs {
			ids = append(ids, id)
		}
		a.mu.Unlock()
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"keepme", "newone", "stopme"}) {
			t.Fatalf("allocs tracked %v", ids)
		}
		if srv.current.Load() == 0 {
			t.Fatal("no answer matched the agent's digest: the test did not test the sync")
		}
		if held := a.heldJobs(); len(held) != 1 || held[0].Ref() != srv.alloc("keepme").Job.Ref() {
			t.Fatalf("held jobs %v", held)
		}
	})
}
