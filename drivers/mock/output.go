package mock

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/drivers"
)

// writeOutput appends the task's stdout_string and stderr_string to its
// live log files, as a process writing them once at start would: the
// files named as the other drivers name theirs (base + ".0", the highest
// index being the live one), opened through the allocation's directory
// so that a link a task left there is never followed out of it. Nothing
// is written when logs are disabled or the task has no log paths. A
// string is written whole: the live file may overshoot max_file_size by
// up to its length (structs.MockMaxOutputBytes), as a raw_exec file may
// between two rotation checks.
func writeOutput(cfg *drivers.TaskConfig, tc taskConfig) error {
	if tc.Stdout == "" && tc.Stderr == "" {
		return nil
	}
	if cfg.LogConfig.Disabled || cfg.StdoutPath == "" || cfg.StderrPath == "" {
		return nil
	}
	if cfg.TaskDir == "" {
		return fmt.Errorf("%w: mock stdout_string/stderr_string need a task directory", drivers.ErrInvalidConfig)
	}
	root, err := allocfs.Open(filepath.Dir(filepath.Clean(cfg.TaskDir)))
	if err != nil {
		return err
	}
	defer root.Close()
	for _, o := range []struct{ base, text string }{{cfg.StdoutPath, tc.Stdout}, {cfg.StderrPath, tc.Stderr}} {
		if o.text == "" {
			continue
		}
		if err := appendLive(root, o.base, o.text); err != nil {
			return err
		}
	}
	return nil
}

// appendLive appends text to the live file of the log whose host path
// base is base ("…/alloc/logs/web.stdout").
func appendLive(root *allocfs.Root, base, text string) error {
	dir, err := root.Rel(filepath.Dir(base))
	if err != nil {
		return err
	}
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := root.ReadDir(dir)
	if err != nil {
		return err
	}
	live, prefix := 0, filepath.Base(base)+"."
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil && n >= 0 && strconv.Itoa(n) == rest {
			live = max(live, n)
		}
	}
	f, err := root.OpenAppend(filepath.Join(dir, prefix+strconv.Itoa(live)), 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
