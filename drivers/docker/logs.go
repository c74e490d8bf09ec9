package docker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"golang.org/x/sys/unix"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// Logs: the daemon keeps each container's output (a small json-file, see
// logConfig); the driver follows it through the API and writes it into
// the task's log files, laid out as raw_exec lays them out and as alloc
// logs reads them: "<task>.stdout.0", ".1", …, the highest index being the
// live file. Since the client writes the files itself, it rotates by
// opening the next index when the live file is full, and deletes files
// beyond max_files: nothing is copied and nothing is lost.
//
// When the client is down, the daemon keeps the output. The driver asks
// for each line with the daemon's timestamp, writes the line without it,
// and sets the file's modification time to it (to the nanosecond, which
// the kernel's own, coarser, stamp would not give). A client that
// re-attaches follows the container again from just after the newest
// such time of the two files: the lines written meanwhile are caught up,
// none twice.

// rotatingFile is an io.Writer over a task's numbered log files. The
// files live in alloc/logs, which the task's container can write: every
// open, removal and stamp goes through the allocation's allocfs root, and
// whatever a task put in place of a log file (a symlink to a host file, a
// FIFO) is replaced, never written through.
type rotatingFile struct {
	root     *allocfs.Root
	dir      string // relative to root
	base     string // "web.stdout"
	maxFiles int
	maxBytes int64

	mu   sync.Mutex
	f    *os.File
	idx  int
	size int64
	last time.Time // of the last write
}

// openRotating opens the log files named basePath.N inside the
// allocation directory allocDir.
func openRotating(allocDir, basePath string, maxFiles, maxFileMB int) (*rotatingFile, error) {
	root, err := allocfs.Open(allocDir)
	if err != nil {
		return nil, err
	}
	dir, err := root.Rel(filepath.Dir(basePath))
	if err != nil {
		root.Close()
		return nil, err
	}
	r := &rotatingFile{
		root: root, dir: dir, base: filepath.Base(basePath),
		maxFiles: max(maxFiles, 1), maxBytes: int64(max(maxFileMB, 1)) << 20,
	}
	if err := r.openFirst(); err != nil {
		root.Close()
		return nil, err
	}
	return r, nil
}

func (r *rotatingFile) openFirst() error {
	if err := r.root.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	idx, err := r.indexes()
	if err != nil {
		return err
	}
	for _, n := range idx {
		r.idx = max(r.idx, n)
	}
	return r.open()
}

func (r *rotatingFile) path(i int) string {
	return filepath.Join(r.dir, r.base+"."+strconv.Itoa(i))
}

func (r *rotatingFile) open() error {
	f, err := r.root.OpenAppend(r.path(r.idx), 0o644)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size, r.last = f, fi.Size(), fi.ModTime()
	return nil
}

// indexes returns the indexes of the files, in no order.
func (r *rotatingFile) indexes() ([]int, error) {
	entries, err := r.root.ReadDir(r.dir)
	if err != nil {
		return nil, err
	}
	var out []int
	prefix := r.base + "."
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil && n >= 0 && strconv.Itoa(n) == rest {
			out = append(out, n)
		}
	}
	return out, nil
}

// Write appends p to the live file, first moving to the next file when p
// would overflow a non-empty live file.
func (r *rotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	r.last = time.Now()
	return n, err
}

// writeStamped writes one line the daemon timestamped and stamps the file
// with the line's time.
func (r *rotatingFile) writeStamped(p []byte, at time.Time) error {
	if _, err := r.Write(p); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return os.ErrClosed
	}
	r.last = at
	// Through the open file, not its name: a task may have put a link in
	// its place since.
	return futimens(r.f, at)
}

// stamped is an io.Writer for stdcopy.StdCopy, which writes one frame,
// one message of the daemon, per call: "<RFC 3339 time> <line>".
type stamped struct{ f *rotatingFile }

func (s stamped) Write(p []byte) (int, error) {
	ts, line, ok := bytes.Cut(p, []byte{' '})
	at, err := time.Parse(time.RFC3339Nano, string(ts))
	if !ok || err != nil {
		// Not stamped after all: keep the bytes as they are.
		return s.f.Write(p)
	}
	if err := s.f.writeStamped(line, at); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (r *rotatingFile) rotate() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	r.idx++
	if err := r.open(); err != nil {
		r.f = nil
		return err
	}
	idx, err := r.indexes()
	if err != nil {
		return err
	}
	for _, n := range idx {
		if n <= r.idx-r.maxFiles {
			if err := r.root.Remove(r.path(n)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// lastWrite is when the live file was last written.
func (r *rotatingFile) lastWrite() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *rotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	r.root.Close()
	return err
}

// taskLogs are a task's two rotating files.
type taskLogs struct {
	stdout, stderr *rotatingFile
}

// openTaskLogs opens a task's log files; nil when logs are disabled.
func openTaskLogs(cfg *drivers.TaskConfig) (*taskLogs, error) {
	lc := cfg.LogConfig
	if lc.Disabled || cfg.StdoutPath == "" || cfg.StderrPath == "" {
		return nil, nil
	}
	if lc.MaxFiles == 0 {
		lc.MaxFiles = structs.DefaultLogMaxFiles
	}
	if lc.MaxFileSizeMB == 0 {
		lc.MaxFileSizeMB = structs.DefaultLogMaxFileMB
	}
	out, err := openRotating(allocRoot(cfg), cfg.StdoutPath, lc.MaxFiles, lc.MaxFileSizeMB)
	if err != nil {
		return nil, err
	}
	errf, err := openRotating(allocRoot(cfg), cfg.StderrPath, lc.MaxFiles, lc.MaxFileSizeMB)
	if err != nil {
		out.Close()
		return nil, err
	}
	return &taskLogs{stdout: out, stderr: errf}, nil
}

func (l *taskLogs) lastWrite() time.Time {
	a, b := l.stdout.lastWrite(), l.stderr.lastWrite()
	if b.After(a) {
		return b
	}
	return a
}

func (l *taskLogs) close() {
	l.stdout.Close()
	l.stderr.Close()
}

// follow copies the container's output into the task's files until the
// container stops (the daemon ends the stream), ctx ends, or exited is
// closed while the stream is broken. since, when set, skips what was
// written before it. A broken stream (a daemon restart) is followed again
// from the last write.
func (d *Driver) follow(ctx context.Context, id string, l *taskLogs, since time.Time, exited <-chan struct{}) {
	backoff := 250 * time.Millisecond
	for {
		opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true, Timestamps: true}
		if !since.IsZero() {
			from := since.Add(time.Nanosecond)
			opts.Since = fmt.Sprintf("%d.%09d", from.Unix(), from.Nanosecond())
		}
		rc, err := d.client.ContainerLogs(ctx, id, opts)
		if err == nil {
			_, err = stdcopy.StdCopy(stamped{l.stdout}, stamped{l.stderr}, rc)
			rc.Close()
		}
		if err == nil || ctx.Err() != nil {
			return
		}
		d.logger.Debug("following container output", "container", id, "error", err)
		since = l.lastWrite()
		select {
		case <-ctx.Done():
			return
		case <-exited:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// futimens sets f's access and modification times to at, to the
// nanosecond, by its descriptor (utimensat with a NULL path, as libc's
// futimens).
func futimens(f *os.File, at time.Time) error {
	ts := [2]unix.Timespec{unix.NsecToTimespec(at.UnixNano()), unix.NsecToTimespec(at.UnixNano())}
	var err error
	rc, cerr := f.SyscallConn()
	if cerr != nil {
		return cerr
	}
	cerr = rc.Control(func(fd uintptr) {
		_, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, fd, 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
		if errno != 0 {
			err = &os.PathError{Op: "futimens", Path: f.Name(), Err: errno}
		}
	})
	if cerr != nil {
		return cerr
	}
	return err
}
