package client

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/exec"
	"github.com/droverhq/drover/structs"
)

// The exec driver re-executes this test binary as each task's init.
func init() { exec.Init() }

// runExecAgent starts an agent over HTTP with an exec driver of its own
// whose state is under dataDir, as a client process would.
func runExecAgent(t *testing.T, dataDir string, servers []string) (*Agent, func(stopTasks bool)) {
	t.Helper()
	d, err := exec.New(exec.Options{StateDir: filepath.Join(dataDir, "exec")})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{
		DataDir: dataDir, NodeName: "box", Servers: servers, Logger: testLogger(t),
		Drivers:       []drivers.Driver{d},
		RetryInterval: 20 * time.Millisecond, AllocWait: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Run(context.Background()); close(done) }()
	return a, func(stopTasks bool) { a.Shutdown(stopTasks); <-done }
}

// allocPIDs finds the host PIDs of an allocation's processes by the
// NOMAD_ALLOC_ID in their environment.
func allocPIDs(allocID string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		kv := []byte("NOMAD_ALLOC_ID=" + allocID + "\x00")
		if err == nil && (bytes.HasPrefix(env, kv) || bytes.Contains(env, append([]byte{0}, kv...))) {
			out = append(out, pid)
		}
	}
	return out
}

// TestExecRestartReattaches: an exec task keeps running while its client
// restarts, and the new client re-attaches to it (no second start) and
// stops it when the servers say so, leaving no cgroup.
func TestExecRestartReattaches(t *testing.T) {
	if reason := exec.Unsupported(); reason != "" {
		if os.Getenv("DROVER_REQUIRE_ISOLATION") == "1" {
			t.Fatalf("DROVER_REQUIRE_ISOLATION=1 but: %s", reason)
		}
		t.Skip(reason)
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("no /bin/busybox")
	}
	srv := newFakeServer()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	data := t.TempDir()

	a1, stop1 := runExecAgent(t, data, []string{hs.URL})
	waitFor(t, "registration", a1.Registered)
	al := serviceAlloc("iso", a1.NodeID(), "", 0)
	al.Job.TaskGroups[0].Tasks[0] = &structs.Task{Name: "srv", Driver: "exec", KillTimeout: 5 * time.Second,
		Config: map[string]any{"command": "/bin/busybox", "args": []any{"sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1 & wait; done"}}}
	srv.put(al)
	var pids []int
	waitFor(t, "the task running", func() bool {
		pids = allocPIDs("iso")
		return len(pids) > 0 && srv.alloc("iso").ClientStatus == structs.AllocClientStatusRunning
	})
	t.Cleanup(func() {
		for _, pid := range allocPIDs("iso") {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
	stop1(false)
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("a client restart killed the task's process %d", pid)
		}
	}

	a2, stop2 := runExecAgent(t, data, []string{hs.URL})
	defer stop2(true)
	waitFor(t, "registration again", a2.Registered)
	var st *structs.TaskState
	waitFor(t, "the alloc re-attached", func() bool {
		a2.mu.Lock()
		e := a2.allocs["iso"]
		a2.mu.Unlock()
		if e == nil || e.runner == nil {
			return false
		}
		st = e.runner.Status().TaskStates["srv"]
		return st != nil && st.State == structs.TaskStateRunning
	})
	started := 0
	for _, ev := range st.Events {
		if ev.Type == structs.TaskStarted {
			started++
		}
	}
	if started != 1 || st.Restarts != 0 {
		t.Fatalf("after re-attaching: started %d times, %d restarts", started, st.Restarts)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("the task's process %d died across the restart", pid)
		}
	}

	srv.change("iso", func(al *structs.Allocation) { al.DesiredStatus = structs.AllocDesiredStatusStop })
	waitFor(t, "the re-attached task stopped", func() bool { return len(allocPIDs("iso")) == 0 })
	waitFor(t, "its state removed", func() bool {
		entries, _ := os.ReadDir(filepath.Join(data, "exec"))
		return len(entries) == 0
	})
}
