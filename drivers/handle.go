package drivers

import (
	"fmt"
	"sync"
)

// CheckHandle returns an error unless h is a handle of the named driver.
func CheckHandle(h *TaskHandle, driver string) error {
	if h == nil || h.Config == nil {
		return fmt.Errorf("%w: empty handle", ErrInvalidConfig)
	}
	if h.Driver != driver {
		return fmt.Errorf("%w: %q", ErrWrongDriver, h.Driver)
	}
	return nil
}

// Lookup finds h's task in a driver's task table, guarded by mu, after
// checking that h is the named driver's; ErrTaskNotFound when it is not
// there.
func Lookup[T any](mu *sync.Mutex, tasks map[string]T, h *TaskHandle, driver string) (T, error) {
	var zero T
	if err := CheckHandle(h, driver); err != nil {
		return zero, err
	}
	mu.Lock()
	defer mu.Unlock()
	t, ok := tasks[h.ID()]
	if !ok {
		return zero, fmt.Errorf("%w: %s", ErrTaskNotFound, h.ID())
	}
	return t, nil
}
