package mock

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/drivers"
)

var _ drivers.StatsDriver = (*Driver)(nil)

// Stats reports a running simulated task's usage: nothing, measured as
// zero RSS and zero CPU time (a mock task has no process). A task that has
// exited is not found.
func (d *Driver) Stats(ctx context.Context, h *drivers.TaskHandle) (*drivers.TaskUsage, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, err
	}
	if _, done := t.exit.Result(); done {
		return nil, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	u := &drivers.TaskUsage{Timestamp: d.clock.Now()}
	u.Memory.Measured = []string{drivers.MeasuredRSS}
	u.CPU.Measured = []string{drivers.MeasuredSystemMode, drivers.MeasuredUserMode, drivers.MeasuredPercent}
	return u, nil
}
