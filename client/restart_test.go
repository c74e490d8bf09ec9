package client

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/rawexec"
	"github.com/droverhq/drover/structs"
)

// These tests use real parts: HTTP on 127.0.0.1 and real processes. They
// poll, bounded in time.

// waitFor polls cond for up to 90s: a container's start on a loaded
// machine (other packages' tests share the docker daemon) took over 30s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	r := strings.LastIndexByte(s, ')')
	return r > 0 && !strings.HasPrefix(strings.TrimSpace(s[r+1:]), "Z")
}

// runAgent starts an agent over HTTP to the given servers, with raw_exec.
func runAgent(t *testing.T, dataDir string, servers []string) (*Agent, func(stopTasks bool)) {
	t.Helper()
	a, err := New(Config{
		DataDir: dataDir, NodeName: "box", Servers: servers, Logger: testLogger(t),
		Drivers:       []drivers.Driver{rawexec.New(rawexec.Options{})},
		RetryInterval: 20 * time.Millisecond, AllocWait: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Run(context.Background()); close(done) }()
	return a, func(stopTasks bool) { a.Shutdown(stopTasks); <-done }
}

// sleeperAlloc runs a shell that writes its PID, then becomes sleep.
func sleeperAlloc(id, node string) *structs.Allocation {
	al := serviceAlloc(id, node, "", 0)
	al.Job.TaskGroups[0].Tasks[0] = &structs.Task{Name: "srv", Driver: "raw_exec", KillTimeout: 5 * time.Second,
		Config: map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo $$ > pid; exec /bin/sleep 300"}}}
	return al
}

func readPID(t *testing.T, dataDir, allocID string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "alloc", allocID, "srv", "pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func TestFailsOverBetweenServers(t *testing.T) {
	srv := newFakeServer()
	dead := httptest.NewServer(srv)
	dead.Close() // refuses connections
	live := httptest.NewServer(srv)
	defer live.Close()
	a, stop := runAgent(t, t.TempDir(), []string{dead.URL, live.URL})
	defer stop(true)
	waitFor(t, "registration through the live server", a.Registered)
	// This agent has only raw_exec: the mock alloc fails, and the report
	// reaches the servers through the live one.
	srv.put(serviceAlloc("a1", a.NodeID(), "", 0))
	waitFor(t, "the alloc's report", func() bool { return srv.alloc("a1").ClientStatus == structs.AllocClientStatusFailed })
}

func TestRestartReattachesWithoutDuplicates(t *testing.T) {
	srv := newFakeServer()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	data := t.TempDir()

	a1, stop1 := runAgent(t, data, []string{hs.URL})
	waitFor(t, "registration", a1.Registered)
	node := a1.NodeID()
	srv.put(sleeperAlloc("keep", node))
	srv.put(sleeperAlloc("drop", node))
	var keepPID, dropPID int
	waitFor(t, "both tasks running", func() bool {
		keepPID, dropPID = readPID(t, data, "keep"), readPID(t, data, "drop")
		return keepPID > 0 && dropPID > 0 &&
			srv.alloc("keep").ClientStatus == structs.AllocClientStatusRunning &&
			srv.alloc("drop").ClientStatus == structs.AllocClientStatusRunning
	})
	t.Cleanup(func() {
		for _, pid := range []int{keepPID, dropPID} {
			if p, err := os.FindProcess(pid); err == nil && alive(pid) {
				_ = p.Kill()
			}
		}
	})
	stop1(false)
	if !alive(keepPID) || !alive(dropPID) {
		t.Fatal("a client restart killed its tasks")
	}

	// While the client is away, the servers drop one allocation.
	srv.remove("drop")
	a2, stop2 := runAgent(t, data, []string{hs.URL})
	defer stop2(true)
	if a2.NodeID() != node {
		t.Fatalf("node ID changed across the restart: %s, was %s", a2.NodeID(), node)
	}
	waitFor(t, "the dropped alloc's task to die", func() bool { return !alive(dropPID) })
	waitFor(t, "the dropped alloc's dir to go", func() bool {
		_, err := os.Stat(filepath.Join(data, "alloc", "drop"))
		return os.IsNotExist(err)
	})
	if !alive(keepPID) {
		t.Fatal("the kept task died across the restart")
	}
	if pid := readPID(t, data, "keep"); pid != keepPID {
		t.Fatalf("kept task started again: pid %d, was %d", pid, keepPID)
	}
	a2.mu.Lock()
	e := a2.allocs["keep"]
	a2.mu.Unlock()
	if e == nil || e.runner == nil {
		t.Fatal("the kept alloc has no runner after the restart")
	}
	st := e.runner.Status().TaskStates["srv"]
	started := 0
	for _, ev := range st.Events {
		if ev.Type == structs.TaskStarted {
			started++
		}
	}
	if started != 1 || st.Restarts != 0 || st.State != structs.TaskStateRunning {
		t.Fatalf("after re-attaching: started %d times, %d restarts, %s", started, st.Restarts, st.State)
	}

	// The servers stop the kept alloc: the re-attached process is killed.
	srv.change("keep", func(al *structs.Allocation) { al.DesiredStatus = structs.AllocDesiredStatusStop })
	waitFor(t, "the kept task to stop", func() bool {
		return !alive(keepPID) && srv.alloc("keep").ClientStatus == structs.AllocClientStatusComplete
	})
}
