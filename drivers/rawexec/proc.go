package rawexec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// errProcGone: the process does not exist (or is another process now).
var errProcGone = errors.New("process gone")

// procStartTicks reads a process's start time, in clock ticks since boot,
// from /proc/<pid>/stat (field 22). Together with the PID it names one
// process for good: a reused PID has another start time. A zombie is
// gone.
func procStartTicks(pid int) (uint64, error) {
	ticks, zombie, err := procStat(pid)
	if err == nil && zombie {
		return 0, errProcGone
	}
	return ticks, err
}

// procStat reads a process's start time and whether it is a zombie.
func procStat(pid int) (ticks uint64, zombie bool, err error) {
	fields, err := statFields(pid)
	if err != nil {
		return 0, false, err
	}
	zombie = fields[0][0] == 'Z' || fields[0][0] == 'X'
	ticks, err = strconv.ParseUint(string(fields[19]), 10, 64)
	return ticks, zombie, err
}

// zombieStatus returns the wait status of an exited process that nobody
// has reaped yet (field 52 of /proc/<pid>/stat, Linux 3.5+), if pid is
// still that zombie. It is how the exit code of a process the client
// re-attached to can sometimes be known: its parent is then some other
// process (often init), which usually reaps it at once.
func zombieStatus(pid int, ticks uint64) (syscall.WaitStatus, bool) {
	fields, err := statFields(pid)
	if err != nil || fields[0][0] != 'Z' || len(fields) < 50 {
		return 0, false
	}
	if t, err := strconv.ParseUint(string(fields[19]), 10, 64); err != nil || t != ticks {
		return 0, false
	}
	ws, err := strconv.ParseUint(string(fields[49]), 10, 32)
	if err != nil {
		return 0, false
	}
	return syscall.WaitStatus(ws), true
}

// statFields returns the fields of /proc/<pid>/stat from field 3 (state)
// on, so that field n is at index n-3.
func statFields(pid int) ([][]byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if os.IsNotExist(err) {
			return nil, errProcGone
		}
		return nil, err
	}
	// The command name (field 2) is in parentheses and may hold spaces or
	// parentheses itself; the fields after the last ')' are plain.
	r := bytes.LastIndexByte(b, ')')
	if r < 0 {
		return nil, fmt.Errorf("parsing /proc/%d/stat", pid)
	}
	fields := bytes.Fields(b[r+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 || len(fields[0]) == 0 {
		return nil, fmt.Errorf("parsing /proc/%d/stat: %d fields", pid, len(fields))
	}
	return fields, nil
}

// exitWatch tells when a process exits, for children and strangers alike.
// It prefers a pidfd waited on through the runtime's poller (no thread
// blocked per task) and falls back to polling /proc.
type exitWatch struct {
	pid   int
	f     *os.File // pidfd, or nil when polling /proc
	ticks uint64
	stop  chan struct{}
	once  sync.Once
}

// watchExit opens a watch on pid, which must be the process started at
// ticks. It returns errProcGone if that process no longer exists; an
// exited child not yet reaped (a zombie) is still watched, and its watch
// reports the exit at once.
func watchExit(pid int, ticks uint64) (*exitWatch, error) {
	w := &exitWatch{pid: pid, ticks: ticks, stop: make(chan struct{})}
	fd, err := unix.PidfdOpen(pid, 0)
	if err == nil {
		if err := unix.SetNonblock(fd, true); err != nil {
			_ = unix.Close(fd)
		} else {
			w.f = os.NewFile(uintptr(fd), "pidfd")
		}
	}
	// Check identity after opening the pidfd, so that the fd is known to
	// refer to the process we mean.
	got, _, err := procStat(pid)
	if err != nil || got != ticks {
		w.close()
		if err == nil || errors.Is(err, errProcGone) {
			return nil, errProcGone
		}
		return nil, err
	}
	return w, nil
}

// alive reports whether the process still runs.
func (w *exitWatch) alive() bool {
	if w.f != nil {
		rc, err := w.f.SyscallConn()
		if err == nil {
			exited := false
			if rc.Control(func(fd uintptr) { exited = pidfdReadable(int(fd)) }) == nil {
				return !exited
			}
		}
	}
	got, err := procStartTicks(w.pid)
	return err == nil && got == w.ticks
}

func pidfdReadable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}

// wait blocks until the process exits or the watch is closed; it returns
// false in the latter case.
func (w *exitWatch) wait() bool {
	if w.f != nil {
		if rc, err := w.f.SyscallConn(); err == nil {
			err = rc.Read(func(fd uintptr) bool { return pidfdReadable(int(fd)) })
			if err == nil {
				return true
			}
			select {
			case <-w.stop:
				return false
			default:
			}
			// Not pollable here: fall back to /proc.
		}
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		if got, err := procStartTicks(w.pid); err != nil || got != w.ticks {
			return true
		}
		select {
		case <-w.stop:
			return false
		case <-t.C:
		}
	}
}

// close ends the watch; a blocked wait returns false.
func (w *exitWatch) close() {
	w.once.Do(func() {
		close(w.stop)
		if w.f != nil {
			_ = w.f.Close()
		}
	})
}
