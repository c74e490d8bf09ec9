package client

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/structs"
)

// stickyShellAlloc is a raw_exec alloc of a sticky group whose task writes
// its PID and runs until killed; with stubborn it ignores SIGINT and
// SIGTERM, so that its kill takes the kill timeout (3s).
func stickyShellAlloc(id, node string, version uint64, stubborn bool) *structs.Allocation {
	al := serviceAlloc(id, node, "", version)
	tg := al.Job.TaskGroups[0]
	tg.EphemeralDisk = &structs.EphemeralDisk{SizeMB: 300, Sticky: true}
	script := "echo $$ > pid; exec /bin/sleep 300"
	if stubborn {
		script = "trap '' INT TERM; echo $$ > pid; while :; do sleep 0.1; done"
	}
	tg.Tasks[0] = &structs.Task{Name: "srv", Driver: "raw_exec", KillTimeout: 3 * time.Second,
		Config: map[string]any{"command": "/bin/sh", "args": []any{"-c", script}}}
	return al
}

// stoppedWithAReplacementSaved runs alloc "old" (stickyShellAlloc) on an
// agent with a file in its alloc/data, stops the agent without stopping
// the task, and leaves on disk what a client that stopped abruptly while
// "new", its replacement, waited would leave: "new" saved (startAlloc's
// first write) with no state of its tasks. It returns "new" for the
// caller to put on the servers.
func stoppedWithAReplacementSaved(t *testing.T, stubborn bool) (srv *fakeServer, hs *httptest.Server, data string, oldPID int, next *structs.Allocation) {
	t.Helper()
	srv = newFakeServer()
	hs = httptest.NewServer(srv)
	data = t.TempDir()
	a1, stop1 := runAgent(t, data, []string{hs.URL})
	waitFor(t, "registration", a1.Registered)
	node := a1.NodeID()
	srv.put(stickyShellAlloc("old", node, 0, stubborn))
	waitFor(t, "the old task running", func() bool {
		oldPID = readPID(t, data, "old")
		return oldPID > 0 && srv.alloc("old").ClientStatus == structs.AllocClientStatusRunning
	})
	t.Cleanup(func() {
		if p, err := os.FindProcess(oldPID); err == nil && alive(oldPID) {
			_ = p.Kill()
		}
	})
	if err := os.WriteFile(filepath.Join(data, "alloc", "old", "alloc", "data", "db"), []byte("rows"), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs := a1.cfg.Jobs
	stop1(false)
	next = stickyShellAlloc("new", node, 1, false)
	next.PreviousAllocation = "old"
	if err := saveAlloc(allocrunner.NewAllocDir(data, "new"), next, jobs); err != nil {
		t.Fatal(err)
	}
	return srv, hs, data, oldPID, next
}

// A client that stops abruptly while a sticky replacement waits for its
// previous alloc to stop leaves the replacement saved with no task
// started, and the previous alloc's saved copy running (an alloc being
// stopped is not saved again). On restore the replacement waits for the
// servers' first answer, which stops the previous alloc: it then waits
// for it and takes over its data, as it would have without the restart.
func TestStickyReplacementWaitsAcrossAClientRestart(t *testing.T) {
	srv, hs, data, oldPID, next := stoppedWithAReplacementSaved(t, true)
	defer hs.Close()
	// The servers stopped the old alloc and placed the replacement.
	srv.change("old", func(al *structs.Allocation) {
		al.DesiredStatus, al.DesiredDescription = structs.AllocDesiredStatusStop, structs.AllocUpdating
	})
	srv.put(next)

	_, stop2 := runAgent(t, data, []string{hs.URL})
	defer stop2(true)
	waitFor(t, "the replacement running", func() bool {
		return readPID(t, data, "new") > 0 && srv.alloc("new").ClientStatus == structs.AllocClientStatusRunning
	})
	if alive(oldPID) {
		t.Fatal("the replacement runs beside the old task")
	}
	b, err := os.ReadFile(filepath.Join(data, "alloc", "new", "alloc", "data", "db"))
	if err != nil || string(b) != "rows" {
		t.Fatalf("the replacement's alloc/data/db: %q %v, want the old alloc's", b, err)
	}
}

// A replacement the servers stopped while the client was away, before its
// tasks started, is reported complete, each task killed before it started.
func TestStickyReplacementStoppedAcrossAClientRestart(t *testing.T) {
	srv, hs, data, oldPID, next := stoppedWithAReplacementSaved(t, false)
	defer hs.Close()
	next.DesiredStatus = structs.AllocDesiredStatusStop
	srv.put(next)

	_, stop2 := runAgent(t, data, []string{hs.URL})
	defer stop2(true)
	waitFor(t, "the replacement reported complete", func() bool {
		return srv.alloc("new").ClientStatus == structs.AllocClientStatusComplete
	})
	st := srv.alloc("new").TaskStates["srv"]
	if st == nil || st.State != structs.TaskStateDead || st.Failed || !hasEvent(st, structs.TaskKilled, "") {
		t.Fatalf("the replacement's task: %+v", st)
	}
	if pid := readPID(t, data, "new"); pid != 0 {
		t.Fatalf("the stopped replacement's task ran (pid %d)", pid)
	}
	if !alive(oldPID) || srv.alloc("old").ClientStatus != structs.AllocClientStatusRunning {
		t.Fatal("the old alloc, which the servers did not stop, stopped")
	}
}
