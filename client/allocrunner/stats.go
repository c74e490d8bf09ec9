package allocrunner

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/drivers"
)

// TaskUsage samples a task's resource usage through its driver
// (drivers.StatsDriver) and returns it with the start time of the task's
// current handle, from which its CPU times count. It returns an error
// wrapping drivers.ErrTaskNotFound when the group has no such task or the
// task is not running, and drivers.ErrStatsNotSupported when its driver
// cannot measure it.
func (ar *AllocRunner) TaskUsage(ctx context.Context, task string) (*drivers.TaskUsage, time.Time, error) {
	tr := ar.runners[task]
	t := ar.group.LookupTask(task)
	if tr == nil || t == nil {
		return nil, time.Time{}, fmt.Errorf("%w: no task %q runs in the allocation", drivers.ErrTaskNotFound, task)
	}
	h := tr.Handle()
	if h == nil {
		return nil, time.Time{}, fmt.Errorf("%w: task %q is not running", drivers.ErrTaskNotFound, task)
	}
	sd, ok := ar.cfg.Drivers[t.Driver].(drivers.StatsDriver)
	if !ok {
		return nil, h.StartedAt, fmt.Errorf("%w: %s", drivers.ErrStatsNotSupported, t.Driver)
	}
	u, err := sd.Stats(ctx, h)
	return u, h.StartedAt, err
}
