package java

import (
	"regexp"
	"strings"
)

// Version is what java -version says of the JVM: Nomad's
// driver.java.version, driver.java.runtime and driver.java.vm.
type Version struct {
	Version string // "17.0.15"
	Runtime string // "OpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)"
	VM      string // "OpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)"
}

var versionNumber = regexp.MustCompile(`[0-9][0-9._]*`)

// ParseVersion reads java -version's output (stderr), as Nomad reads it:
// the version's first line, then the runtime's and the VM's; lines the
// JVM prints first about options it picked up from the environment
// (_JAVA_OPTIONS, JAVA_TOOL_OPTIONS) are skipped. It reports false for
// output of fewer lines.
func ParseVersion(out string) (Version, bool) {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		l = strings.TrimSpace(l)
		if len(lines) == 0 && (l == "" || strings.HasPrefix(l, "Picked up ")) {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) < 3 {
		return Version{}, false
	}
	v := Version{Version: lines[0], Runtime: lines[1], VM: lines[2]}
	if m := versionNumber.FindString(lines[0]); m != "" {
		v.Version = m
	}
	return v, true
}

// firstLine is s's first line, for messages.
func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
