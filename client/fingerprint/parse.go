package fingerprint

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// ParseCPUInfo reads /proc/cpuinfo: the speed of the first core that
// reports one ("cpu MHz"), and the number of "processor" entries.
func ParseCPUInfo(r io.Reader) (mhz float64, processors int) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch trimSpace(k) {
		case "processor":
			processors++
		case "cpu MHz":
			if mhz == 0 {
				if f, err := strconv.ParseFloat(trimSpace(v), 64); err == nil && f > 0 {
					mhz = f
				}
			}
		}
	}
	return mhz, processors
}

// ParseMemInfo reads /proc/meminfo's MemTotal, in bytes; 0 when absent.
func ParseMemInfo(r io.Reader) (int64, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || trimSpace(k) != "MemTotal" {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		if len(f) > 1 && strings.EqualFold(f[1], "kB") {
			n *= 1024
		}
		return n, true
	}
	return 0, false
}

// ParseOSRelease reads /etc/os-release: the distribution's ID ("ubuntu")
// and VERSION_ID ("24.04"), unquoted.
func ParseOSRelease(r io.Reader) (name, version string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(trimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		v = strings.Trim(trimSpace(v), `"'`)
		switch k {
		case "ID":
			name = v
		case "VERSION_ID":
			version = v
		}
	}
	return name, version
}

func trimSpace(s string) string { return strings.TrimSpace(s) }
