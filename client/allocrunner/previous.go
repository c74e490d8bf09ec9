package allocrunner

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/structs"
)

// A group whose ephemeral disk is sticky (or migrates) takes over the
// data of the allocation it replaces when both are on the same node, as
// Nomad's client does: the new allocation's tasks wait for the previous
// allocation to stop, then its shared data directory (alloc/data) and
// each task's local directory move into the new allocation, and the tasks
// start. A move that fails fails the tasks, as Nomad's.

// Previous is the allocation a new one replaces on the same node, which
// the servers stopped: see Config.Previous.
type Previous struct {
	ID  string
	Dir AllocDir
	// Done is closed once the previous allocation's tasks are all dead
	// (closed already for one that had finished).
	Done <-chan struct{}
}

// takeOver waits for the previous allocation to stop, moves its data
// into this one and lets the tasks start; the tasks fail if the move
// fails. It gives up when this allocation's tasks end first (killed while
// they wait).
func (ar *AllocRunner) takeOver() {
	p := ar.cfg.Previous
	select {
	case <-p.Done:
	case <-ar.doneCh:
		return
	}
	if err := moveData(p.Dir, ar.dir, ar.group.Tasks); err != nil {
		msg := fmt.Sprintf("failed to migrate data from the previous allocation %s: %v", p.ID, err)
		for _, tr := range ar.runners {
			tr.Fail(msg)
		}
	}
	close(ar.prevReady)
}

// anyStarted reports whether a task of the persisted state ever started.
func anyStarted(p *persisted) bool {
	for _, t := range p.Tasks {
		if t != nil && (t.Handle != nil || t.State != nil && (t.State.State != structs.TaskStatePending || !t.State.StartedAt.IsZero())) {
			return true
		}
	}
	return false
}

// moveData moves the previous allocation's alloc/data and each task's
// local directory (for the tasks of the same name) into to, through a
// root on the directory that holds both allocations: a symlink the
// previous tasks left on the way is followed only inside it, and one
// in place of a directory is not moved. Into an empty directory the
// previous one moves whole; into one that holds files already (a
// dispatch payload written into local/), each entry that is not there
// yet moves. What is missing (moved already, by a client that stopped
// after the move) is left.
func moveData(from, to AllocDir, tasks []*structs.Task) error {
	parent := filepath.Dir(to.Root)
	if filepath.Dir(from.Root) != parent {
		return fmt.Errorf("allocation directories %s and %s are not side by side", from.Root, to.Root)
	}
	root, err := allocfs.Open(parent)
	if err != nil {
		return err
	}
	defer root.Close()
	src, dst := filepath.Base(from.Root), filepath.Base(to.Root)
	dirs := []string{path.Join("alloc", "data")}
	for _, t := range tasks {
		dirs = append(dirs, path.Join(t.Name, "local"))
	}
	for _, d := range dirs {
		if err := moveDir(root, path.Join(src, d), path.Join(dst, d)); err != nil {
			return err
		}
	}
	return nil
}

// moveDir moves directory old to new inside root (see moveData).
func moveDir(root *allocfs.Root, old, new string) error {
	fi, err := root.Lstat(old)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return nil
	}
	if err := root.Remove(new); err == nil || errors.Is(err, fs.ErrNotExist) {
		return root.Rename(old, new)
	}
	entries, err := root.ReadDir(old)
	if err != nil {
		return err
	}
	for _, e := range entries {
		to := path.Join(new, e.Name())
		if _, err := root.Lstat(to); err == nil {
			continue
		}
		if err := root.Rename(path.Join(old, e.Name()), to); err != nil {
			return err
		}
	}
	return nil
}
