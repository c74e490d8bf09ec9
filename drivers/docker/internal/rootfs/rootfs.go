// Package rootfs builds the root file systems of the small images drover
// makes itself, with no registry to pull from: a tar archive of Debian's
// static busybox (package busybox-static) with a link per applet, plus
// the directories and files an image needs. The docker driver imports
// its pause image from one (drivers/docker/pause_image.go), the tests
// their busybox image (drivers/docker/dockertest).
package rootfs

import (
	"archive/tar"
	"bytes"
	"fmt"
	"time"
)

// BusyboxPath is where Debian's busybox-static installs the binary.
const BusyboxPath = "/bin/busybox"

// Entry is one directory, file or symbolic link of an image.
type Entry struct {
	// Name is the path in the image, without a leading slash; a
	// directory's ends with one.
	Name string
	Mode int64
	// Body is a file's content; Link a symbolic link's target. An entry
	// with neither whose name ends in a slash is a directory.
	Body []byte
	Link string
}

// Dir is a directory entry.
func Dir(name string, mode int64) Entry { return Entry{Name: name, Mode: mode} }

// File is a regular file entry.
func File(name string, mode int64, body []byte) Entry {
	return Entry{Name: name, Mode: mode, Body: body}
}

// Busybox is the entries of bin/ with busybox in it and a link to it for
// each applet.
func Busybox(busybox []byte, applets []string) []Entry {
	out := []Entry{Dir("bin/", 0o755), File("bin/busybox", 0o755, busybox)}
	for _, a := range applets {
		out = append(out, Entry{Name: "bin/" + a, Mode: 0o777, Link: "busybox"})
	}
	return out
}

// Tar writes the entries, in order, as a tar archive with every time at
// the epoch (the same entries give the same archive).
func Tar(entries []Entry) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Unix(0, 0)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Mode: e.Mode, ModTime: now}
		switch {
		case e.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Link
		case e.Body == nil && len(e.Name) > 0 && e.Name[len(e.Name)-1] == '/':
			h.Typeflag = tar.TypeDir
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("building an image's file system: %s: %w", e.Name, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.Body); err != nil {
				return nil, fmt.Errorf("building an image's file system: %s: %w", e.Name, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
