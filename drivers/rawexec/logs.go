package rawexec

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/droverhq/drover/drivers"
)

// Log rotation without a helper process.
//
// A task's stdout and stderr are files opened with O_APPEND and handed to
// the process as its fds 1 and 2, named as Nomad lays them out:
// "<task>.stdout.0", ".1", …, the highest index being the live file. The
// client checks their size every so often and rotates by copy and
// truncate: it copies the live file to a hidden temporary file, truncates
// the live inode, renames it to the next index, renames the copy to the
// old name, and deletes files beyond max_files. A reader never sees the
// same bytes twice; for an instant the old content is missing until the
// copy takes its name.
//
// Why not a pipe read by the client, or a log helper per task: a pipe
// breaks when the client dies (the task then gets SIGPIPE or blocks), and
// a helper costs one process per task. A file the task holds open itself
// survives a client restart untouched; after re-attaching, the client
// finds the live file again as the highest index and resumes rotating.
//
// The price: bytes written between the copy and the truncate are lost (a
// window of one file copy); a file may overshoot max_file_size by what is
// written between two checks; and while the client is down nothing
// rotates, so files grow until it returns. O_APPEND is what makes
// truncation safe: the task's next write lands at the new end of file
// instead of leaving a hole at its old offset.
type rotator struct {
	dir      string
	base     string // "web.stdout"
	maxFiles int
	maxBytes int64
}

func newRotator(basePath string, maxFiles, maxFileMB int) *rotator {
	if maxFiles < 1 {
		maxFiles = 1
	}
	if maxFileMB < 1 {
		maxFileMB = 1
	}
	return &rotator{
		dir: filepath.Dir(basePath), base: filepath.Base(basePath),
		maxFiles: maxFiles, maxBytes: int64(maxFileMB) << 20,
	}
}

func (r *rotator) path(i int) string {
	return filepath.Join(r.dir, r.base+"."+strconv.Itoa(i))
}

// indexes returns the indexes of the rotator's files, in no order.
func (r *rotator) indexes() ([]int, error) {
	entries, err := os.ReadDir(r.dir)
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

// live returns the index of the live file, or -1 if there is none.
func (r *rotator) live() (int, error) {
	idx, err := r.indexes()
	if err != nil {
		return -1, err
	}
	hi := -1
	for _, n := range idx {
		hi = max(hi, n)
	}
	return hi, nil
}

// open opens the live file for appending, creating ".0" if there is none.
func (r *rotator) open() (*os.File, error) {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}
	r.removeTemps()
	i, err := r.live()
	if err != nil {
		return nil, err
	}
	return os.OpenFile(r.path(max(i, 0)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
}

// check rotates the live file if it has reached the size limit. It
// reports whether it rotated.
func (r *rotator) check() (bool, error) {
	i, err := r.live()
	if err != nil || i < 0 {
		return false, err
	}
	live := r.path(i)
	fi, err := os.Stat(live)
	if err != nil || fi.Size() < r.maxBytes {
		return false, err
	}
	tmp, err := r.copyOf(live)
	if err != nil {
		return false, err
	}
	next := r.path(i + 1)
	if err := os.Truncate(live, 0); err != nil {
		_ = os.Remove(tmp)
		return false, err
	}
	if err := os.Rename(live, next); err != nil {
		_ = os.Remove(tmp)
		return false, err
	}
	if err := os.Rename(tmp, live); err != nil {
		_ = os.Remove(tmp)
		return false, err
	}
	return true, r.prune(i + 1)
}

const tmpInfix = ".rotate-"

// copyOf copies a file to a hidden temporary file beside it and returns
// the copy's path.
func (r *rotator) copyOf(path string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(r.dir, "."+r.base+tmpInfix+"*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(tmp, src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("copying %s: %w", path, err)
	}
	return tmp.Name(), nil
}

// removeTemps deletes copies a client left behind when it died during a
// rotation.
func (r *rotator) removeTemps() {
	m, _ := filepath.Glob(filepath.Join(r.dir, "."+r.base+tmpInfix+"*"))
	for _, p := range m {
		_ = os.Remove(p)
	}
}

// prune deletes files older than the newest maxFiles, given the live index.
func (r *rotator) prune(live int) error {
	idx, err := r.indexes()
	if err != nil {
		return err
	}
	for _, n := range idx {
		if n <= live-r.maxFiles {
			if err := os.Remove(r.path(n)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// LogFiles are a task's live stdout and stderr files, opened for the
// task's process to write itself, and their rotation (as above). Drivers
// whose tasks write their own log files share raw_exec's (exec does).
type LogFiles struct {
	// Stdout and Stderr are handed to the process; close them with
	// CloseFiles once it holds its own copies.
	Stdout, Stderr *os.File
	rs             []*rotator
}

// OpenLogFiles opens cfg's live log files (/dev/null when its logs are
// disabled). After a client restart, it finds the live files again.
func OpenLogFiles(cfg *drivers.TaskConfig) (*LogFiles, error) {
	stdout, stderr, rs, err := openLogs(cfg)
	if err != nil {
		return nil, err
	}
	return &LogFiles{Stdout: stdout, Stderr: stderr, rs: rs}, nil
}

// CloseFiles closes the client's copies of the files; rotation goes on.
func (l *LogFiles) CloseFiles() {
	l.Stdout.Close()
	l.Stderr.Close()
}

// Rotate rotates the files that have reached their size limit.
func (l *LogFiles) Rotate() {
	for _, r := range l.rs {
		_, _ = r.check()
	}
}
