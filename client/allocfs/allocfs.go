// Package allocfs is the one door through which the client opens a file
// that a job named: an artifact's destination, a template's source and
// destination, a dispatch payload, a task's log file, a docker bind
// source. Each is opened through an os.Root on the allocation's directory,
// so that the kernel, not a text check, keeps it inside: a symlink that a
// task made ("alloc/root -> /") resolves inside the allocation or is
// refused, whenever it was made (no time of check against time of use).
//
// A job is untrusted input. Paths it names are given here as written,
// relative to the allocation's directory (Task and Shared build them); an
// absolute path, or one that climbs out with "..", or a symlink that leads
// out, is refused with an error that wraps ErrEscapes.
package allocfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrEscapes: a path leads outside the allocation's directory, as written
// or through a symlink.
var ErrEscapes = errors.New("path escapes the allocation directory")

// ErrNotRegular: a file that should be a regular file (a log, a template's
// source) is a directory, a device, a FIFO or a socket.
var ErrNotRegular = errors.New("not a regular file")

// maxLinks bounds the symlinks followed by RealPath, as the kernel's 40.
const maxLinks = 40

// Root is an allocation's directory, opened. It is safe for concurrent
// use; Close releases it.
type Root struct {
	root *os.Root
	dir  string
}

// Open opens the allocation directory dir (a host path the client made).
func Open(dir string) (*Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Root{root: r, dir: filepath.Clean(dir)}, nil
}

// Close releases the directory.
func (r *Root) Close() error { return r.root.Close() }

// Dir is the allocation directory's host path.
func (r *Root) Dir() string { return r.dir }

// Task is the path of rel inside the task's directory, relative to the
// allocation's; a leading "/" is taken inside the task's directory, as
// Nomad's client joins it. It is only text: opening it is what checks it.
func Task(task, rel string) string {
	return path.Join(task, strings.TrimLeft(rel, "/"))
}

// Shared is the path of rel inside the allocation's shared directory
// (alloc/), relative to the allocation's.
func Shared(rel string) string {
	return path.Join("alloc", strings.TrimLeft(rel, "/"))
}

// Rel turns a host path under the allocation directory (a log directory,
// a task directory the client computed) into one relative to it.
func (r *Root) Rel(hostPath string) (string, error) {
	rel, err := filepath.Rel(r.dir, filepath.Clean(hostPath))
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%w: %q", ErrEscapes, hostPath)
	}
	return rel, nil
}

// check refuses, before any system call, a name that leaves the root as
// written; os.Root refuses it too, but with an error that does not say so.
func check(name string) error {
	if name == "." || filepath.IsLocal(name) {
		return nil
	}
	return fmt.Errorf("%w: %q", ErrEscapes, name)
}

// wrap makes os.Root's refusals of an escape (an absolute symlink, "..")
// an ErrEscapes.
func wrap(name string, err error) error {
	if err == nil {
		return nil
	}
	if strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%w: %q (through a symbolic link)", ErrEscapes, name)
	}
	return err
}

// Open opens a regular file for reading. A FIFO or device a task left
// there is refused without blocking on it.
func (r *Root) Open(name string) (*os.File, error) {
	if err := check(name); err != nil {
		return nil, err
	}
	f, err := r.root.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK, 0)
	return regular(name, f, err)
}

// regular passes on an opened file that is a regular file, and closes
// any other with ErrNotRegular.
func regular(name string, f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, wrap(name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %q", ErrNotRegular, name)
	}
	return f, nil
}

// ReadFile reads a regular file of at most max bytes (0: no bound).
func (r *Root) ReadFile(name string, max int64) ([]byte, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rd io.Reader = f
	if max > 0 {
		rd = io.LimitReader(f, max+1)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	if max > 0 && int64(len(b)) > max {
		return nil, fmt.Errorf("%q is larger than %d bytes", name, max)
	}
	return b, nil
}

// Stat follows symlinks inside the root.
func (r *Root) Stat(name string) (fs.FileInfo, error) {
	if err := check(name); err != nil {
		return nil, err
	}
	fi, err := r.root.Stat(name)
	return fi, wrap(name, err)
}

// Lstat is Stat of a symlink itself, which it does not follow; one on
// the way to it is followed inside the root.
func (r *Root) Lstat(name string) (fs.FileInfo, error) {
	if err := check(name); err != nil {
		return nil, err
	}
	fi, err := r.root.Lstat(name)
	return fi, wrap(name, err)
}

// ReadDir lists a directory.
func (r *Root) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := check(name); err != nil {
		return nil, err
	}
	es, err := fs.ReadDir(r.root.FS(), filepath.ToSlash(name))
	return es, wrap(name, err)
}

// MkdirAll makes a directory and its parents.
func (r *Root) MkdirAll(name string, perm fs.FileMode) error {
	if err := check(name); err != nil {
		return err
	}
	return wrap(name, r.root.MkdirAll(name, perm))
}

// WriteFile replaces name with data, atomically: a new file is written
// beside it and renamed over it, so that a symlink at name is replaced,
// never followed, and a reader sees the old content or the new. Its
// parents are made as needed.
func (r *Root) WriteFile(name string, data []byte, perm fs.FileMode) error {
	return r.write(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func (r *Root) write(name string, perm fs.FileMode, fill func(io.Writer) error) error {
	if err := check(name); err != nil {
		return err
	}
	if name == "." {
		return fmt.Errorf("cannot write the allocation directory itself")
	}
	dir := filepath.Dir(name)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var tmp string
	var f *os.File
	for i := 0; ; i++ {
		tmp = filepath.Join(dir, "."+filepath.Base(name)+".drover-tmp"+strconv.Itoa(i))
		var err error
		f, err = r.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return wrap(name, err)
		}
	}
	err := fill(f)
	if err == nil {
		// The umask narrowed perm at create.
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.root.Rename(tmp, name)
	}
	if err != nil {
		r.root.Remove(tmp)
		return wrap(name, err)
	}
	return nil
}

// OpenAppend opens a log file the client writes for a task (alloc/logs/
// <task>.stdout.N), creating it: whatever a task put in its place (a
// symlink, a FIFO, a directory) is removed first, so that the client
// appends to a regular file of its own and never, through a link, to
// another one. Between the removal and the open a task could place a link
// again: it is then followed inside the root only.
func (r *Root) OpenAppend(name string, perm fs.FileMode) (*os.File, error) {
	if err := check(name); err != nil {
		return nil, err
	}
	if fi, err := r.root.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		if err := r.root.RemoveAll(name); err != nil {
			return nil, wrap(name, err)
		}
	}
	f, err := r.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NONBLOCK, perm)
	return regular(name, f, err)
}

// WriteFrom replaces name with what src holds, as WriteFile does.
func (r *Root) WriteFrom(name string, perm fs.FileMode, src io.Reader) error {
	return r.write(name, perm, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// Rename renames oldname to newname inside the root; a symlink at either
// is renamed or replaced, never followed.
func (r *Root) Rename(oldname, newname string) error {
	if err := check(oldname); err != nil {
		return err
	}
	if err := check(newname); err != nil {
		return err
	}
	return wrap(oldname, r.root.Rename(oldname, newname))
}

// Remove removes name; a symlink is removed, never followed.
func (r *Root) Remove(name string) error {
	if err := check(name); err != nil {
		return err
	}
	return wrap(name, r.root.Remove(name))
}

// Chmod sets name's mode; a symlink there is followed inside the root
// only.
func (r *Root) Chmod(name string, mode fs.FileMode) error {
	if err := check(name); err != nil {
		return err
	}
	return wrap(name, r.root.Chmod(name, mode))
}

// Lchown gives name (not what a symlink there points at) to uid and gid.
func (r *Root) Lchown(name string, uid, gid int) error {
	if err := check(name); err != nil {
		return err
	}
	return wrap(name, r.root.Lchown(name, uid, gid))
}

// RemoveAll removes name and what is under it; a symlink is removed,
// never followed.
func (r *Root) RemoveAll(name string) error {
	if err := check(name); err != nil {
		return err
	}
	return wrap(name, r.root.RemoveAll(name))
}

// CopyIn copies src, a file or directory tree the client itself wrote
// (an artifact fetched into a directory of its own), to name inside the
// root: directories and regular files only, their permission bits kept;
// a symlink or special file in src is an error. Files already at name are
// replaced; a symlink on the way to one is followed only inside the root.
func (r *Root) CopyIn(src, name string) error {
	if err := check(name); err != nil {
		return err
	}
	src = filepath.Clean(src)
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(name, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			return r.MkdirAll(dst, fi.Mode().Perm()|0o700)
		case fi.Mode().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			return r.write(dst, fi.Mode().Perm(), func(w io.Writer) error {
				_, err := io.Copy(w, in)
				return err
			})
		default:
			return fmt.Errorf("%s: %w (%s)", rel, ErrNotRegular, fi.Mode().Type())
		}
	})
}

// RealPath resolves name through the root, symlinks included, and returns
// the host path it names: for handing to another program (a docker bind
// source), which would otherwise follow a task's symlink itself. name must
// exist. Nothing is opened for reading (a FIFO does not block).
func (r *Root) RealPath(name string) (string, error) {
	if err := check(name); err != nil {
		return "", err
	}
	cur := name
	for range maxLinks {
		f, err := r.root.OpenFile(cur, unix.O_PATH, 0)
		if err != nil {
			return "", wrap(name, err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
			f.Close()
			if err != nil {
				return "", err
			}
			if p != r.dir && !strings.HasPrefix(p, r.dir+string(filepath.Separator)) {
				// The directory itself was moved or is reached through a
				// link of the host's: never hand out a path outside it.
				return "", fmt.Errorf("%w: %q resolves to %q", ErrEscapes, name, p)
			}
			return p, nil
		}
		f.Close()
		// The last element is a symlink (O_PATH opens it, not its
		// target): follow it by hand, inside the root.
		target, err := r.root.Readlink(cur)
		if err != nil {
			return "", wrap(name, err)
		}
		if filepath.IsAbs(target) {
			return "", fmt.Errorf("%w: %q (through a symbolic link)", ErrEscapes, name)
		}
		cur = filepath.Join(filepath.Dir(cur), target)
		if err := check(cur); err != nil {
			return "", fmt.Errorf("%w: %q (through a symbolic link)", ErrEscapes, name)
		}
	}
	return "", fmt.Errorf("%q: too many levels of symbolic links", name)
}
