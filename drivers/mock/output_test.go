package mock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// logCfg is a task config laid out as the client lays out an
// allocation: <alloc>/<task> and <alloc>/alloc/logs/<task>.std{out,err}.
func logCfg(t *testing.T, c map[string]any) (*drivers.TaskConfig, string) {
	t.Helper()
	alloc := t.TempDir()
	logs := filepath.Join(alloc, "alloc", "logs")
	tc := cfg("web", c)
	tc.TaskDir = filepath.Join(alloc, "web")
	tc.StdoutPath = filepath.Join(logs, "web.stdout")
	tc.StderrPath = filepath.Join(logs, "web.stderr")
	return tc, logs
}

func TestStdoutStderrString(t *testing.T) {
	big := strings.Repeat("x", 500_000)
	tc, logs := logCfg(t, map[string]any{"stdout_string": big, "stderr_string": "oops\n"})
	// A live file at a higher index (rotation happened) is appended to.
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logs, "web.stderr.2"), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := New(Options{Clock: clock.NewFake(epoch)})
	if _, err := d.Start(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(logs, "web.stdout.0")); err != nil || string(b) != big {
		t.Fatalf("stdout: %d bytes, %v", len(b), err)
	}
	if b, err := os.ReadFile(filepath.Join(logs, "web.stderr.2")); err != nil || string(b) != "before\noops\n" {
		t.Fatalf("stderr: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(logs, "web.stderr.0")); !os.IsNotExist(err) {
		t.Fatalf("stderr.0 made beside the live file: %v", err)
	}
}

func TestOutputDisabledLogs(t *testing.T) {
	tc, logs := logCfg(t, map[string]any{"stdout_string": "hi"})
	tc.LogConfig.Disabled = true
	d := New(Options{Clock: clock.NewFake(epoch)})
	if _, err := d.Start(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(logs); !os.IsNotExist(err) {
		t.Fatalf("logs written while disabled: %v", err)
	}
}

// A link a task left in place of its log directory is not followed out
// of the allocation.
func TestOutputLinkNotFollowed(t *testing.T) {
	tc, logs := logCfg(t, map[string]any{"stdout_string": "hi"})
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Dir(logs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, logs); err != nil {
		t.Fatal(err)
	}
	d := New(Options{Clock: clock.NewFake(epoch)})
	if _, err := d.Start(context.Background(), tc); !errors.Is(err, drivers.ErrStartFailed) {
		t.Fatalf("Start = %v, want a start failure", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the allocation: %v", ents)
	}
}

func TestOutputConfigErrors(t *testing.T) {
	for name, c := range map[string]map[string]any{
		"type": {"stdout_string": int64(3)},
		"size": {"stderr_string": strings.Repeat("x", structs.MockMaxOutputBytes+1)},
	} {
		tc, _ := logCfg(t, c)
		_, err := New(Options{Clock: clock.NewFake(epoch)}).Start(context.Background(), tc)
		if !errors.Is(err, drivers.ErrInvalidConfig) {
			t.Errorf("%s: Start = %v, want ErrInvalidConfig", name, err)
		}
	}
}

// Nomad's mock_driver: its own name, and a task with no run_for exits
// at once (a mock one runs until stopped).
func TestNomadMockDriver(t *testing.T) {
	c := clock.NewFake(epoch)
	d := New(Options{Clock: c, Nomad: true})
	if d.Name() != structs.DriverMockNomad || d.Fingerprint().Attributes["driver.mock_driver"] != "1" {
		t.Fatalf("name %q, fingerprint %v", d.Name(), d.Fingerprint().Attributes)
	}
	h, err := d.Start(context.Background(), cfg("t", map[string]any{"exit_code": int64(2)}))
	if err != nil {
		t.Fatal(err)
	}
	if h.Driver != structs.DriverMockNomad {
		t.Fatalf("handle of %q", h.Driver)
	}
	if r, ok := exited(t, d, h); !ok || r.ExitCode != 2 {
		t.Fatalf("no run_for: %+v exited=%v", r, ok)
	}
	if err := New(Options{Clock: c}).Recover(h); !errors.Is(err, drivers.ErrWrongDriver) {
		t.Fatalf("mock recovered a mock_driver handle: %v", err)
	}
	if err := New(Options{Clock: c, Nomad: true}).Recover(h); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("recover after exit: %v", err)
	}
	h, err = d.Start(context.Background(), cfg("u", map[string]any{"run_for": "5s"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := exited(t, d, h); ok {
		t.Fatal("exited before run_for")
	}
	c.Advance(5 * time.Second)
	if _, ok := exited(t, d, h); !ok {
		t.Fatal("running after run_for")
	}
}
