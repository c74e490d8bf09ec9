package allocrunner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// persisted is the allocation's state file: enough for a restarted client
// to re-attach to its tasks instead of starting them again.
type persisted struct {
	Version int
	Tasks   map[string]*persistedTask
	// RunStartedAt is when the allocation's first runner started it: the
	// group's max_run_duration counts from there, across client restarts.
	RunStartedAt time.Time `json:",omitzero"`
}

type persistedTask struct {
	State  *structs.TaskState
	Handle *drivers.TaskHandle `json:",omitempty"`
}

const stateVersion = 1

// loadState reads the state file; a missing file is an empty state.
func loadState(path string) (*persisted, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &persisted{Version: stateVersion, Tasks: map[string]*persistedTask{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var p persisted
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorruptState, path, err)
	}
	if p.Version != stateVersion {
		return nil, fmt.Errorf("%w: %s: version %d", ErrCorruptState, path, p.Version)
	}
	if p.Tasks == nil {
		p.Tasks = map[string]*persistedTask{}
	}
	return &p, nil
}

// saveState writes the state file atomically (temp file, then rename).
// Its contents are what json.NewEncoder(f).Encode(p) writes, encoded by
// encodeState (statejson.go) into a buffer reused between writes.
func saveState(path string, p *persisted) error {
	bp := stateBufs.Get().(*[]byte)
	b, err := encodeState((*bp)[:0], p)
	if err != nil {
		stateBufs.Put(bp)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*")
	if err != nil {
		stateBufs.Put(bp)
		return err
	}
	_, err = tmp.Write(b)
	if cap(b) <= maxStateBuf {
		*bp = b
		stateBufs.Put(bp)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// stateBufs are the buffers state files are encoded into; one that grew
// past maxStateBuf (a task with a huge environment) is not kept.
var stateBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxStateBuf = 64 << 10
