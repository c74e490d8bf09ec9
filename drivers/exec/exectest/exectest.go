// Package exectest holds what the tests of the drivers built on
// drivers/exec share (exec and java, and the end-to-end tests that run
// them): skipping a test where a task cannot be isolated, laying out a
// task's allocation directory as the client does, starting a task and
// waiting for its exit.
//
// It does not import drivers/exec, so that package's own tests can use
// it: callers pass exec.Unsupported to Require.
package exectest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// RequireEnv names the variable that, set to 1, turns a host that cannot
// run an isolated task into a failure rather than a skip (CI sets it).
const RequireEnv = "DROVER_REQUIRE_ISOLATION"

// Busybox is the static busybox the exec tests run as their tasks
// (Debian's busybox-static).
const Busybox = "/bin/busybox"

// Require skips t with the first reason its checks give (a check answers
// "" when what it checks is there), or fails it when RequireEnv is 1.
func Require(t testing.TB, checks ...func() string) {
	t.Helper()
	for _, check := range checks {
		reason := check()
		if reason == "" {
			continue
		}
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s=1 but: %s", RequireEnv, reason)
		}
		t.Skip(reason)
	}
}

// NoBusybox is a check for Require: it says so when Busybox is missing.
func NoBusybox() string {
	if _, err := os.Stat(Busybox); err != nil {
		return "no " + Busybox + " (Debian's busybox-static)"
	}
	return ""
}

// NewTask lays out an allocation directory as the client does (the task
// "task" with its local, secrets and tmp directories, the alloc's logs
// and data) and returns the config of a task of that directory with
// config: a random allocation ID, Nomad's default logging, 100 MHz and
// 256 MB, stopped with SIGTERM then killed after a second.
func NewTask(t testing.TB, config map[string]any) *drivers.TaskConfig {
	t.Helper()
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		t.Fatal(err)
	}
	name := "task"
	taskDir := filepath.Join(root, name)
	allocDir := filepath.Join(root, "alloc")
	logs := filepath.Join(allocDir, "logs")
	for _, d := range []string{taskDir, filepath.Join(taskDir, "local"), filepath.Join(taskDir, "secrets"), filepath.Join(taskDir, "tmp"), logs, filepath.Join(allocDir, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &drivers.TaskConfig{
		AllocID: hex.EncodeToString(id), TaskName: name, TaskDir: taskDir, AllocDir: allocDir,
		Env:         map[string]string{"NOMAD_TASK_DIR": "/local", "NOMAD_ALLOC_DIR": "/alloc"},
		Config:      config,
		StdoutPath:  filepath.Join(logs, name+".stdout"),
		StderrPath:  filepath.Join(logs, name+".stderr"),
		LogConfig:   *structs.DefaultLogConfig(),
		KillTimeout: time.Second, KillSignal: "SIGTERM",
		Resources: &structs.AllocatedTaskResources{
			Cpu: structs.AllocatedCpuResources{CpuShares: 100}, Memory: structs.AllocatedMemoryResources{MemoryMB: 256},
		},
	}
}

// Runner is what Start and WaitExit need of a driver.
type Runner interface {
	Start(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error)
	Wait(h *drivers.TaskHandle) (<-chan drivers.ExitResult, error)
	Destroy(h *drivers.TaskHandle) error
}

// Start starts cfg's task within timeout and destroys it when t ends.
func Start(t testing.TB, d Runner, cfg *drivers.TaskConfig, timeout time.Duration) *drivers.TaskHandle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	h, err := d.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Destroy(h) })
	return h
}

// WaitExit returns the task's exit result, failing t if it does not exit
// within timeout.
func WaitExit(t testing.TB, d Runner, h *drivers.TaskHandle, timeout time.Duration) drivers.ExitResult {
	t.Helper()
	ch, err := d.Wait(h)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		return r
	case <-time.After(timeout):
		t.Fatal("task did not exit")
	}
	return drivers.ExitResult{}
}
