package allocrunner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/structs"
)

// AllocDir is an allocation's directory tree, as Nomad lays it out:
//
//	<data-dir>/alloc/<alloc-id>/
//	    alloc/            shared by the group's tasks (NOMAD_ALLOC_DIR)
//	        logs/         <task>.stdout.N and <task>.stderr.N
//	        data/ tmp/
//	    <task>/           the task's working directory
//	        local/        NOMAD_TASK_DIR
//	        secrets/      NOMAD_SECRETS_DIR
//	        tmp/
//	    state.json        task handles and states, for re-attachment
type AllocDir struct {
	Root string
}

// NewAllocDir returns the tree of one allocation under dataDir.
func NewAllocDir(dataDir, allocID string) AllocDir {
	return AllocDir{Root: filepath.Join(dataDir, "alloc", allocID)}
}

// SharedDir is the group's shared directory.
func (d AllocDir) SharedDir() string { return filepath.Join(d.Root, "alloc") }

// LogDir holds the tasks' log files.
func (d AllocDir) LogDir() string { return filepath.Join(d.Root, "alloc", "logs") }

// TaskDir is a task's working directory.
func (d AllocDir) TaskDir(task string) string { return filepath.Join(d.Root, task) }

// TaskLocalDir is a task's NOMAD_TASK_DIR.
func (d AllocDir) TaskLocalDir(task string) string { return filepath.Join(d.Root, task, "local") }

// TaskSecretsDir is a task's NOMAD_SECRETS_DIR.
func (d AllocDir) TaskSecretsDir(task string) string { return filepath.Join(d.Root, task, "secrets") }

// StatePath is the allocation's state file.
func (d AllocDir) StatePath() string { return filepath.Join(d.Root, "state.json") }

// Build creates the tree for the given tasks; existing directories are
// kept as they are. Directories are made parent first with one mkdir
// each (no MkdirAll, whose extra stat calls double the cost of setting up
// many allocations at once); the allocation's own directory (and the
// data dir's alloc directory) only when found missing.
func (d AllocDir) Build(tasks []string) error {
	shared := d.SharedDir()
	sharedTmp := filepath.Join(shared, "tmp")
	dirs := make([]string, 0, 4+4*len(tasks))
	dirs = append(dirs, shared, filepath.Join(shared, "logs"), filepath.Join(shared, "data"), sharedTmp)
	for _, t := range tasks {
		if t == "" || t == "alloc" || t == "." || t == ".." || filepath.Base(t) != t {
			return fmt.Errorf("%w: task name %q cannot name a directory", ErrInvalidConfig, t)
		}
		td := d.TaskDir(t)
		dirs = append(dirs, td, filepath.Join(td, "local"), filepath.Join(td, "secrets"), filepath.Join(td, "tmp"))
	}
	made := 0 // of alloc/ and alloc/tmp, the ones made here
	for i, p := range dirs {
		err := os.Mkdir(p, 0o755)
		if i == 0 && errors.Is(err, fs.ErrNotExist) {
			// The allocation's own directory is missing (the agent
			// makes it first, with alloc.json).
			if err = d.MakeRoot(); err == nil {
				err = os.Mkdir(p, 0o755)
			}
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err == nil && (p == shared || p == sharedTmp) {
			made++
		}
	}
	if made == 2 {
		// Both made just now, before any task ran: nothing but this
		// directory can be at alloc/tmp.
		return os.Chmod(sharedTmp, 0o777|os.ModeSticky)
	}
	// alloc/tmp may be a task's since the allocation last ran (a client
	// restart builds the tree again): through the root, a link it put
	// there cannot make a host directory world-writable.
	root, err := allocfs.Open(d.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Chmod(allocfs.Shared("tmp"), 0o777|os.ModeSticky)
}

// MakeRoot makes the allocation's directory, and the data dir's alloc
// directory when it is missing too; one that exists is kept.
func (d AllocDir) MakeRoot() error {
	err := os.Mkdir(d.Root, 0o755)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(d.Root), 0o755); err != nil {
			return err
		}
		err = os.Mkdir(d.Root, 0o755)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// WritePayload writes a dispatched job's payload into the task's local
// directory at its dispatch_payload file, as Nomad's client does. A task
// without dispatch_payload, or a job without a payload, gets no file. It
// writes through allocfs: a symlink a task put at the file is replaced,
// and one on the way to it is followed only inside the allocation.
func (d AllocDir) WritePayload(t *structs.Task, payload []byte) error {
	if t.DispatchPayload == nil || t.DispatchPayload.File == "" || len(payload) == 0 {
		return nil
	}
	if !structs.ValidPayloadFile(t.DispatchPayload.File) {
		return fmt.Errorf("%w: task %s: dispatch_payload file %q leaves the task directory", ErrInvalidConfig, t.Name, t.DispatchPayload.File)
	}
	root, err := allocfs.Open(d.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	name := allocfs.Task(t.Name, filepath.Join("local", filepath.Clean(t.DispatchPayload.File)))
	if err := root.WriteFile(name, payload, 0o644); err != nil {
		return fmt.Errorf("task %s: dispatch_payload: %w", t.Name, err)
	}
	return nil
}

// Destroy removes the whole tree.
func (d AllocDir) Destroy() error { return os.RemoveAll(d.Root) }
