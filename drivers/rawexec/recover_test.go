package rawexec

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
)

// TestRecoverReadsZombieExitStatus re-attaches to a process the driver
// did not start, whose parent (the test, standing for whoever inherited
// it) has not reaped it yet when it exits: the exit code is then known.
func TestRecoverReadsZombieExitStatus(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "read line; exit 7")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	ticks, _, err := procStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	cfg := newTask(t, "orphan", "/bin/true")
	h := &drivers.TaskHandle{Version: drivers.HandleVersion, Driver: Name, Config: cfg, StartedAt: time.Now()}
	if err := h.SetDriverState(handleState{PID: pid, StartTicks: ticks}); err != nil {
		t.Fatal(err)
	}
	d := New(Options{})
	if err := d.Recover(h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Destroy(h) })
	stdin.Close() // the process reads EOF and exits 7; nobody reaps it yet
	r := waitExit(t, d, h)
	if r.Unknown || r.ExitCode != 7 {
		t.Fatalf("exit %+v, want known exit code 7", r)
	}
}

func TestZombieStatusNeedsMatchingStartTime(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	deadline := time.Now().Add(testTimeout)
	for {
		if _, zombie, err := procStat(pid); err == nil && zombie {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("child never became a zombie")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ticks, _, _ := procStat(pid)
	if ws, ok := zombieStatus(pid, ticks); !ok || ws.ExitStatus() != 3 {
		t.Fatalf("zombieStatus = %v, %v", ws, ok)
	}
	if _, ok := zombieStatus(pid, ticks+1); ok {
		t.Fatal("zombieStatus accepted another start time")
	}
}
