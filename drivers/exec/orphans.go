package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"

	"github.com/droverhq/drover/drivers"
)

var _ drivers.OrphanReaper = (*Driver)(nil)

// ReapOrphans removes the containers in this client's state directory
// that no allocation of the client owns any more: the tasks of
// allocations the servers stopped or collected while the client was
// down, and what is left of tasks that ended then. Each is killed and its
// cgroup and state destroyed. Only the driver's own state directory is
// read: another client on the same host keeps its tasks.
func (d *Driver) ReapOrphans(ctx context.Context, _ string, owned func(allocID string) bool) ([]string, error) {
	entries, err := os.ReadDir(d.stateDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		id := e.Name()
		allocID, _, ok := strings.Cut(id, ".")
		if !ok || !e.IsDir() || owned(allocID) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		if err := reap(ctx, d.stateDir, id); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		removed = append(removed, id)
	}
	return removed, errors.Join(errs...)
}

// reap kills a container's init (and so its PID namespace), waits for it
// to be gone, and destroys the container.
func reap(ctx context.Context, stateDir, id string) error {
	c, err := libcontainer.Load(stateDir, id)
	if err != nil {
		// State libcontainer cannot read: nothing of it can run.
		return os.RemoveAll(filepath.Join(stateDir, id))
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := c.Status()
		if err != nil || s == libcontainer.Stopped {
			break
		}
		_ = c.Signal(syscall.SIGKILL)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return c.Destroy()
}
