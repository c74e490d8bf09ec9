//go:build linux

package sim

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// Every thread ends up with the nice value, including threads started
// afterwards. The check runs in a child process, so that the test binary
// itself keeps its priority.
func TestLowerPriorityReachesEveryThread(t *testing.T) {
	if os.Getenv("DROVER_PRIORITY_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLowerPriorityReachesEveryThread$", "-test.v")
		cmd.Env = append(os.Environ(), "DROVER_PRIORITY_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		t.Logf("child:\n%s", out)
		return
	}
	if err := lowerPriority(7); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for range 4 { // some of these run on threads started now
		go func() {
			for range 100000 {
				_ = syscall.Getppid()
			}
			done <- struct{}{}
		}()
	}
	for range 4 {
		<-done
	}
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		tid, _ := strconv.Atoi(e.Name())
		p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
		if err != nil {
			continue // the thread ended
		}
		// The raw system call returns 20 - nice.
		if nice := 20 - p; nice != 7 {
			t.Fatalf("thread %d has nice %d, want 7", tid, nice)
		}
	}
	t.Logf("%d threads at nice 7", len(entries))
}
