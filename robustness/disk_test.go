package robustness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// dataDirSize is the size of the tmpfs each server's data directory is
// mounted on: room for a long run's Raft log and snapshots, small enough
// that filling it is cheap.
const dataDirSize = "512m"

// mountDataDir mounts a tmpfs of dataDirSize on dir, owned by uid:gid,
// so that a fault can fill it; it returns the unmount.
func mountDataDir(dir string, uid, gid int) (func(), error) {
	opts := fmt.Sprintf("size=%s,mode=0755,uid=%d,gid=%d", dataDirSize, uid, gid)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mount tmpfs on %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return func() { _ = exec.Command("umount", "-l", dir).Run() }, nil
}

// fillDisk fills the file system of dir (a tmpfs) to the last byte with
// files of its own, as root, and returns the heal that removes them.
func fillDisk(dir string) (func(), error) {
	fill := filepath.Join(dir, "fill")
	if err := os.MkdirAll(fill, 0o700); err != nil {
		return nil, err
	}
	free := func() { _ = os.RemoveAll(fill) }
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		free()
		return nil, err
	}
	// One large file allocated at once, then small writes until the last
	// page is taken.
	if n := int64(st.Bavail)*st.Bsize - 1<<20; n > 0 {
		f, err := os.Create(filepath.Join(fill, "big"))
		if err != nil {
			free()
			return nil, err
		}
		err = unix.Fallocate(int(f.Fd()), 0, 0, n)
		f.Close()
		if err != nil && err != unix.ENOSPC {
			free()
			return nil, fmt.Errorf("fallocate: %w", err)
		}
	}
	page := make([]byte, 4096)
	f, err := os.Create(filepath.Join(fill, "rest"))
	if err != nil {
		free()
		return nil, err
	}
	defer f.Close()
	for {
		if _, err := f.Write(page); err != nil {
			break
		}
	}
	return free, nil
}
