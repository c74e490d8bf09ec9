package sim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ErrNoRSS: the process's resident set size could not be read.
var ErrNoRSS = errors.New("cannot read resident set size")

// RSS returns the resident set size in bytes of process pid (0: this
// process), from /proc/<pid>/status.
func RSS(pid int) (int64, error) {
	f, err := os.Open(procFile(pid, "status"))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoRSS, err)
	}
	defer f.Close()
	return parseVmRSS(f)
}

// procFile is the path of a file of process pid's /proc directory (0:
// this process's).
func procFile(pid int, name string) string {
	if pid > 0 {
		return fmt.Sprintf("/proc/%d/%s", pid, name)
	}
	return "/proc/self/" + name
}

// parseVmRSS reads the VmRSS line ("VmRSS:   123456 kB") of a status
// file.
func parseVmRSS(r io.Reader) (int64, error) {
	line, rest, err := findLine(r, "VmRSS:")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoRSS, err)
	}
	fields := strings.Fields(rest)
	if len(fields) != 2 || fields[1] != "kB" {
		return 0, fmt.Errorf("%w: VmRSS line %q", ErrNoRSS, line)
	}
	kb, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil || kb < 0 {
		return 0, fmt.Errorf("%w: VmRSS line %q", ErrNoRSS, line)
	}
	return kb << 10, nil
}

// findLine returns the first line of r that starts with prefix, and the
// rest of it after the prefix.
func findLine(r io.Reader, prefix string) (line, rest string, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			return sc.Text(), rest, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", fmt.Errorf("no %q line", strings.TrimSpace(prefix))
}
