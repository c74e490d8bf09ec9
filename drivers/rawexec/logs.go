package rawexec

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/droverhq/drover/client/allocfs"

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
	// alloc is the allocation's directory, which every file operation
	// goes through (allocfs): alloc/logs is the task's to write too, and
	// a link it put in place of a log file is replaced, never followed.
	// Empty for files outside an allocation (tests), reached directly.
	alloc    string
	dir      string // alloc/logs: relative to alloc when alloc is set
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

// inAlloc makes the rotator reach its files through the allocation
// directory alloc, which must hold them.
func (r *rotator) inAlloc(alloc string) error {
	root, err := allocfs.Open(alloc)
	if err != nil {
		return err
	}
	defer root.Close()
	rel, err := root.Rel(r.dir)
	if err != nil {
		return err
	}
	r.alloc, r.dir = alloc, rel
	return nil
}

// fsys is the rotator's view of its directory: the allocation's allocfs
// root, or the host's paths.
type fsys interface {
	MkdirAll(name string, perm fs.FileMode) error
	ReadDir(name string) ([]fs.DirEntry, error)
	OpenAppend(name string, perm fs.FileMode) (*os.File, error)
	Open(name string) (*os.File, error)
	Stat(name string) (fs.FileInfo, error)
	WriteFrom(name string, perm fs.FileMode, src io.Reader) error
	Rename(oldname, newname string) error
	Remove(name string) error
}

// hostFS is fsys on host paths.
type hostFS struct{}

func (hostFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (hostFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (hostFS) OpenAppend(name string, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, perm)
}
func (hostFS) Open(name string) (*os.File, error)    { return os.Open(name) }
func (hostFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }
func (hostFS) Rename(oldname, newname string) error  { return os.Rename(oldname, newname) }
func (hostFS) Remove(name string) error              { return os.Remove(name) }
func (hostFS) WriteFrom(name string, perm fs.FileMode, src io.Reader) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// with runs fn on the rotator's files: through the allocation's root,
// opened for the call, or on host paths.
func (r *rotator) with(fn func(fsys) error) error {
	if r.alloc == "" {
		return fn(hostFS{})
	}
	root, err := allocfs.Open(r.alloc)
	if err != nil {
		return err
	}
	defer root.Close()
	return fn(root)
}

func (r *rotator) path(i int) string {
	return filepath.Join(r.dir, r.base+"."+strconv.Itoa(i))
}

// indexes returns the indexes of the rotator's files, in no order.
func (r *rotator) indexes(fs fsys) ([]int, error) {
	entries, err := fs.ReadDir(r.dir)
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
func (r *rotator) live(fs fsys) (int, error) {
	idx, err := r.indexes(fs)
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
func (r *rotator) open() (f *os.File, err error) {
	err = r.with(func(fs fsys) error {
		if err := fs.MkdirAll(r.dir, 0o755); err != nil {
			return err
		}
		r.removeTemps(fs)
		i, err := r.live(fs)
		if err != nil {
			return err
		}
		f, err = fs.OpenAppend(r.path(max(i, 0)), 0o644)
		return err
	})
	return f, err
}

// check rotates the live file if it has reached the size limit. It
// reports whether it rotated.
func (r *rotator) check() (rotated bool, err error) {
	err = r.with(func(fs fsys) error {
		i, err := r.live(fs)
		if err != nil || i < 0 {
			return err
		}
		live := r.path(i)
		fi, err := fs.Stat(live)
		if err != nil || fi.Size() < r.maxBytes {
			return err
		}
		tmp, err := r.copyOf(fs, live)
		if err != nil {
			return err
		}
		next := r.path(i + 1)
		if err := truncate(fs, live); err != nil {
			_ = fs.Remove(tmp)
			return err
		}
		if err := fs.Rename(live, next); err != nil {
			_ = fs.Remove(tmp)
			return err
		}
		if err := fs.Rename(tmp, live); err != nil {
			_ = fs.Remove(tmp)
			return err
		}
		rotated = true
		return r.prune(fs, i+1)
	})
	return rotated, err
}

// truncate empties the live file (the inode the task writes to; a link
// a task put there instead is replaced by an empty file).
func truncate(fs fsys, name string) error {
	f, err := fs.OpenAppend(name, 0o644)
	if err != nil {
		return err
	}
	err = f.Truncate(0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

const tmpInfix = ".rotate-"

// copyOf copies a file to a hidden temporary file beside it and returns
// the copy's path.
func (r *rotator) copyOf(fs fsys, path string) (string, error) {
	src, err := fs.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	tmp := filepath.Join(r.dir, "."+r.base+tmpInfix+"copy")
	if err := fs.WriteFrom(tmp, 0o644, src); err != nil {
		_ = fs.Remove(tmp)
		return "", fmt.Errorf("copying %s: %w", path, err)
	}
	return tmp, nil
}

// removeTemps deletes copies a client left behind when it died during a
// rotation.
func (r *rotator) removeTemps(fs fsys) {
	entries, _ := fs.ReadDir(r.dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "."+r.base+tmpInfix) {
			_ = fs.Remove(filepath.Join(r.dir, e.Name()))
		}
	}
}

// prune deletes files older than the newest maxFiles, given the live index.
func (r *rotator) prune(fs fsys, live int) error {
	idx, err := r.indexes(fs)
	if err != nil {
		return err
	}
	for _, n := range idx {
		if n <= live-r.maxFiles {
			if err := fs.Remove(r.path(n)); err != nil && !os.IsNotExist(err) {
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
