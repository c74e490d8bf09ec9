package mock

import (
	"fmt"

	"github.com/droverhq/drover/drivers"
)

var _ drivers.TaskSignaler = (*Driver)(nil)

// Signal records a signal sent to a running task (Signals lists them);
// the simulated task does not react to it. An unknown signal, or a task
// that has exited, is an error.
func (d *Driver) Signal(h *drivers.TaskHandle, signal string) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	if _, err := drivers.ParseSignal(signal); err != nil {
		return err
	}
	if _, exited := t.exit.Result(); exited {
		return fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	t.mu.Lock()
	t.signals = append(t.signals, signal)
	t.mu.Unlock()
	return nil
}

// Signals returns the signals sent to the task h names, in order.
func (d *Driver) Signals(h *drivers.TaskHandle) []string {
	t, err := d.lookup(h)
	if err != nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.signals...)
}
