package mock

import (
	"fmt"
	"math"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// taskConfig is the mock driver's block.
type taskConfig struct {
	RunFor     time.Duration // 0: run until stopped
	ExitCode   int
	StartError string
	StartDelay time.Duration
	KillAfter  time.Duration
	// Stdout and Stderr are written to the task's log files at start
	// (stdout_string, stderr_string).
	Stdout string
	Stderr string
}

func parseConfig(m map[string]any) (taskConfig, error) {
	var c taskConfig
	var err error
	if c.RunFor, err = duration(m, "run_for"); err != nil {
		return c, err
	}
	if c.StartDelay, err = duration(m, "start_delay"); err != nil {
		return c, err
	}
	if c.KillAfter, err = duration(m, "kill_after"); err != nil {
		return c, err
	}
	switch v := m["exit_code"].(type) {
	case nil:
	case int:
		c.ExitCode = v
	case int64:
		c.ExitCode = int(v)
	case float64:
		if v != math.Trunc(v) {
			return c, fmt.Errorf("%w: mock exit_code %v is not a whole number", drivers.ErrInvalidConfig, v)
		}
		c.ExitCode = int(v)
	default:
		return c, fmt.Errorf("%w: mock exit_code is %T", drivers.ErrInvalidConfig, v)
	}
	switch v := m["start_error"].(type) {
	case nil:
	case string:
		c.StartError = v
	default:
		return c, fmt.Errorf("%w: mock start_error is %T", drivers.ErrInvalidConfig, v)
	}
	if errs := structs.CheckMockConfig(m); len(errs) > 0 {
		return c, fmt.Errorf("%w: mock %s %s", drivers.ErrInvalidConfig, errs[0].Key, errs[0].Msg)
	}
	c.Stdout, _ = m["stdout_string"].(string)
	c.Stderr, _ = m["stderr_string"].(string)
	return c, nil
}

// duration reads a duration written as a string ("5s") or as integer
// nanoseconds (JSON numbers).
func duration(m map[string]any, key string) (time.Duration, error) {
	var d time.Duration
	switch v := m[key].(type) {
	case nil:
		return 0, nil
	case string:
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, fmt.Errorf("%w: mock %s: %w", drivers.ErrInvalidConfig, key, err)
		}
	case int:
		d = time.Duration(v)
	case int64:
		d = time.Duration(v)
	case float64:
		if v > math.MaxInt64 || v < 0 {
			return 0, fmt.Errorf("%w: mock %s out of range", drivers.ErrInvalidConfig, key)
		}
		d = time.Duration(v)
	case time.Duration:
		d = v
	default:
		return 0, fmt.Errorf("%w: mock %s is %T", drivers.ErrInvalidConfig, key, v)
	}
	if d < 0 {
		return 0, fmt.Errorf("%w: mock %s is negative", drivers.ErrInvalidConfig, key)
	}
	return d, nil
}
