package client

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

// stickyAlloc is serviceAlloc with the group's ephemeral disk sticky as
// given, and a task that takes 2s to stop once killed.
func stickyAlloc(id, node string, version uint64, sticky bool) *structs.Allocation {
	a := serviceAlloc(id, node, "", version)
	tg := a.Job.TaskGroups[0]
	tg.EphemeralDisk = &structs.EphemeralDisk{SizeMB: 300, Sticky: sticky}
	tg.Tasks[0].Config = map[string]any{"kill_after": "2s"}
	return a
}

// runOldAlloc starts an agent (inside the caller's bubble) running alloc
// "old" of stickyAlloc, with a file in its alloc/data and in its task's
// local/, each holding its own path.
func runOldAlloc(t *testing.T, sticky bool) (*fakeServer, *Agent, string, func()) {
	srv := newFakeServer()
	data := t.TempDir()
	a, stop := startAgent(t, srv, data)
	synctest.Wait()
	srv.put(stickyAlloc("old", a.NodeID(), 0, sticky))
	time.Sleep(minHealthy)
	synctest.Wait()
	for _, f := range []string{"alloc/data/db", "srv/local/cache"} {
		if err := os.WriteFile(filepath.Join(data, "alloc", "old", f), []byte(f), 0o644); err != nil {
			stop()
			t.Fatal(err)
		}
	}
	return srv, a, data, stop
}

// A replacement whose group's ephemeral disk is sticky, placed on the
// node of the alloc it replaces, starts once that alloc has stopped and
// takes over its alloc/data and its tasks' local directories, as
// Nomad's; without sticky it starts at once and takes nothing.
func TestStickyReplacementTakesOverThePreviousData(t *testing.T) {
	for _, sticky := range []bool{true, false} {
		t.Run(map[bool]string{true: "sticky", false: "not sticky"}[sticky], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, a, data, stop := runOldAlloc(t, sticky)
				defer stop()
				oldDir := filepath.Join(data, "alloc", "old")
				stoppedAt := time.Now()
				srv.change("old", func(al *structs.Allocation) {
					al.DesiredStatus, al.DesiredDescription = structs.AllocDesiredStatusStop, structs.AllocUpdating
				})
				next := stickyAlloc("new", a.NodeID(), 1, sticky)
				next.PreviousAllocation = "old"
				srv.put(next)
				time.Sleep(5 * time.Second)
				synctest.Wait()

				old, got := srv.alloc("old"), srv.alloc("new")
				if old.ClientStatus != structs.AllocClientStatusComplete || got.ClientStatus != structs.AllocClientStatusRunning {
					t.Fatalf("old %s, new %s", old.ClientStatus, got.ClientStatus)
				}
				started := got.TaskStates["srv"].StartedAt
				finished := old.TaskStates["srv"].FinishedAt
				newDir := filepath.Join(data, "alloc", "new")
				for _, f := range []string{"alloc/data/db", "srv/local/cache"} {
					b, err := os.ReadFile(filepath.Join(newDir, f))
					_, errOld := os.Stat(filepath.Join(oldDir, f))
					if sticky && (err != nil || string(b) != f || !os.IsNotExist(errOld)) {
						t.Fatalf("%s: new holds %q (%v), old: %v; want it moved", f, b, err, errOld)
					}
					if !sticky && (err == nil || errOld != nil) {
						t.Fatalf("%s moved without sticky (old: %v)", f, errOld)
					}
				}
				if sticky {
					if started.Before(finished) {
						t.Fatalf("new task started at %v, before the old one stopped at %v", started, finished)
					}
					if !hasEvent(got.TaskStates["srv"], structs.TaskHookWaiting, structs.TaskWaitingPrevious) {
						t.Fatalf("no event of the wait: %+v", got.TaskStates["srv"].Events)
					}
				} else if !started.Before(stoppedAt.Add(time.Second)) {
					t.Fatalf("new task started at %v, want at once (stopped at %v)", started, stoppedAt)
				}
			})
		})
	}
}

// A surge replacement's previous alloc runs on (the servers did not stop
// it): the new one starts at once and takes no data.
func TestStickyReplacementBesideARunningAllocStartsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, a, data, stop := runOldAlloc(t, true)
		defer stop()
		next := stickyAlloc("new", a.NodeID(), 1, true)
		next.PreviousAllocation = "old"
		srv.put(next)
		time.Sleep(reportWindow)
		synctest.Wait()
		if s := srv.alloc("new").ClientStatus; s != structs.AllocClientStatusRunning {
			t.Fatalf("new is %s", s)
		}
		if _, err := os.Stat(filepath.Join(data, "alloc", "old", "alloc", "data", "db")); err != nil {
			t.Fatalf("data taken from a running alloc: %v", err)
		}
	})
}

func hasEvent(st *structs.TaskState, typ, msg string) bool {
	if st == nil {
		return false
	}
	for _, e := range st.Events {
		if e.Type == typ && (msg == "" || e.Message == msg || e.DisplayMessage == msg) {
			return true
		}
	}
	return false
}
