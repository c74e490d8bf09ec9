package allocrunner

import (
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

// waitUntil polls cond, bounded in time.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	r := strings.LastIndexByte(s, ')')
	return r > 0 && !strings.HasPrefix(strings.TrimSpace(s[r+1:]), "Z")
}

// TestRawExecSurvivesClientRestart: a client runs a real process, shuts
// down leaving it running, and a new client (new driver, new alloc
// runner, same data dir) re-attaches to the same process and stops it.
func TestRawExecSurvivesClientRestart(t *testing.T) {
	data := t.TempDir()
	task := &structs.Task{Name: "srv", Driver: "raw_exec", KillTimeout: 5 * time.Second, Config: map[string]any{
		"command": "/bin/sh", "args": []any{"-c", `echo $$ > pid; exec sleep 300`},
	}}
	alloc := testAlloc(structs.JobTypeService, task)
	start := func(rec *recorder) *AllocRunner {
		ar, err := New(Config{
			Alloc: alloc, DataDir: data, OnUpdate: rec.on,
			Drivers: map[string]drivers.Driver{"raw_exec": rawexec.New(rawexec.Options{})},
		})
		if err != nil {
			t.Fatal(err)
		}
		ar.Run()
		return ar
	}
	rec1 := &recorder{}
	ar1 := start(rec1)
	t.Cleanup(func() { ar1.Kill() })
	pidFile := filepath.Join(ar1.Dir().TaskDir("srv"), "pid")
	var pid int
	waitUntil(t, "the task's pid file", func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	ar1.Detach()
	<-ar1.Done()
	if !alive(pid) {
		t.Fatal("detaching killed the task")
	}

	rec2 := &recorder{}
	ar2 := start(rec2)
	t.Cleanup(func() { ar2.Kill() })
	waitUntil(t, "re-attached status", func() bool {
		return ar2.Status().ClientStatus == structs.AllocClientStatusRunning
	})
	st := ar2.Status().TaskStates["srv"]
	started := 0
	for _, e := range st.Events {
		if e.Type == structs.TaskStarted {
			started++
		}
	}
	if started != 1 || st.Restarts != 0 {
		t.Fatalf("task started %d times, restarts %d", started, st.Restarts)
	}
	ar2.Kill()
	select {
	case <-ar2.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("kill did not finish")
	}
	waitUntil(t, "the process to die", func() bool { return !alive(pid) })
	if s := rec2.last().ClientStatus; s != structs.AllocClientStatusComplete {
		t.Fatalf("status %s", s)
	}
}
