package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// A restarted client finds its allocations on disk: next to the alloc
// runner's state.json (task states and driver handles) the agent keeps
// alloc.json, the servers' latest version of the allocation with its job.
// With both, it re-creates each runner, which re-attaches to the tasks
// that still run instead of starting them again. The servers' next answer
// then decides, as for any allocation: kept, updated, or killed.

// allocFile is the agent's copy of the allocation in its directory.
const allocFile = "alloc.json"

// saveAlloc writes alloc (with its job) into its directory, atomically;
// the job's encoding comes from jobs (nil: encoded here).
func saveAlloc(dir allocrunner.AllocDir, alloc *structs.Allocation, jobs *JobCache) error {
	tmp, err := os.CreateTemp(dir.Root, ".alloc-*")
	if errors.Is(err, fs.ErrNotExist) {
		// A new allocation's first save makes its directory (when the
		// agent has not: startAlloc).
		if err := dir.MakeRoot(); err != nil {
			return err
		}
		tmp, err = os.CreateTemp(dir.Root, ".alloc-*")
	}
	if err != nil {
		return err
	}
	err = writeAllocFile(tmp, alloc, jobs)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir.Root, allocFile))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// savedAlloc is one allocation found on disk.
type savedAlloc struct {
	alloc *structs.Allocation
	// states are the tasks' states from the runner's state file, nil
	// when it has none.
	states map[string]*structs.TaskState
}

// runnerStateFile is the part of the alloc runner's state.json the agent
// reads to know whether an allocation had finished.
type runnerStateFile struct {
	Tasks map[string]struct {
		State *structs.TaskState
	}
}

// loadAllocs reads every allocation saved under dataDir, in ID order.
// Directories it cannot read are reported in the error and skipped.
func loadAllocs(dataDir string) ([]savedAlloc, error) {
	paths, err := filepath.Glob(filepath.Join(dataDir, "alloc", "*", allocFile))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []savedAlloc
	var errs []error
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var a structs.Allocation
		if err := json.Unmarshal(b, &a); err != nil || a.ID == "" || a.Job == nil ||
			filepath.Base(filepath.Dir(p)) != a.ID {
			errs = append(errs, fmt.Errorf("%s: not a saved allocation: %v", p, err))
			continue
		}
		s := savedAlloc{alloc: &a}
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(p), "state.json")); err == nil {
			var st runnerStateFile
			if json.Unmarshal(b, &st) == nil {
				s.states = map[string]*structs.TaskState{}
				for name, t := range st.Tasks {
					if t.State != nil {
						s.states[name] = t.State
					}
				}
			}
		}
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}

// finished reports whether the saved allocation's tasks had all ended.
func (s savedAlloc) finished() bool {
	return len(s.states) > 0 && terminal(allocrunner.ClientStatus(s.states))
}

// orphanReapTimeout bounds each driver's ReapOrphans.
const orphanReapTimeout = 30 * time.Second

// reapOrphans runs after restore and before any new allocation starts:
// drivers whose tasks live in a daemon of their own (docker) remove this
// node's tasks that no allocation owns any more, those of allocations the
// servers stopped or collected while the client was down. An allocation
// is owned while the agent runs it.
func (a *Agent) reapOrphans() {
	owned := func(allocID string) bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		e, ok := a.allocs[allocID]
		return ok && e.runner != nil
	}
	for _, d := range a.cfg.Drivers {
		r, ok := d.(drivers.OrphanReaper)
		if !ok {
			continue
		}
		if info := a.node.Drivers[d.Name()]; info != nil && (!info.Detected || !info.Healthy) {
			continue
		}
		ctx, cancel := context.WithTimeout(a.ctx, orphanReapTimeout)
		removed, err := r.ReapOrphans(ctx, a.node.ID, owned)
		cancel()
		if len(removed) > 0 {
			a.logger.Info("removed tasks no allocation owns", "driver", d.Name(), "tasks", removed)
		}
		if err != nil {
			a.logger.Warn("removing tasks no allocation owns", "driver", d.Name(), "error", err)
		}
	}
}
