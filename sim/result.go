package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// Figure is one measured value.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Target, when set, is the goal the figure is held to ("<= 20 s").
	Target string `json:"target,omitempty"`
}

// Machine is where a result was measured.
type Machine struct {
	Cores     int    `json:"cores"`
	MemoryMB  int64  `json:"memory_mb"`
	CPU       string `json:"cpu,omitempty"`
	GoVersion string `json:"go_version"`
	// Commit is the checkout the run started in; Build is the version
	// of the drover binary that ran (its git describe), which differs
	// when an older build is measured from a newer checkout.
	Commit string `json:"git_commit,omitempty"`
	Build  string `json:"build,omitempty"`
	// CalibrationMS is Calibrate's figure at the start of the run: the
	// time of a fixed workload on one core, higher on a slower machine
	// or hour.
	CalibrationMS float64 `json:"calibration_ms,omitempty"`
	// LoadAvg is /proc/loadavg when the run started (the machine may be
	// shared).
	LoadAvg string `json:"loadavg,omitempty"`
}

// Result is one scenario run.
type Result struct {
	Scenario string         `json:"scenario"`
	Servers  string         `json:"servers"` // dev, cluster3 or external
	Started  time.Time      `json:"started"`
	Params   map[string]any `json:"params"`
	Figures  []Figure       `json:"figures"`
	Notes    []string       `json:"notes,omitempty"`
	Machine  Machine        `json:"machine"`
}

// Add appends a figure.
func (r *Result) Add(name string, value float64, unit, target string) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit, Target: target})
}

// Note appends a remark.
func (r *Result) Note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Figure returns the named figure's value and whether it exists.
func (r *Result) Figure(name string) (float64, bool) {
	for _, f := range r.Figures {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// WriteTable prints the result as an aligned table.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario %s (servers: %s)\n", r.Scenario, r.Servers)
	fmt.Fprintln(tw, "FIGURE\tVALUE\tUNIT\tTARGET")
	for _, f := range r.Figures {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, formatValue(f.Value), f.Unit, f.Target)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "note: %s\n", n)
	}
	m := r.Machine
	fmt.Fprintf(tw, "machine: %d cores, %d MB, %s, commit %s, build %s, calibration %s ms, load %s\n",
		m.Cores, m.MemoryMB, m.GoVersion, m.Commit, m.Build, formatValue(m.CalibrationMS), m.LoadAvg)
	return tw.Flush()
}

func formatValue(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.3f", v)
}

// WriteJSON writes the result as indented JSON to dir/<scenario>-<servers>-<time>.json
// and returns the path.
func (r *Result) WriteJSON(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%s-%s.json", r.Scenario, r.Servers, r.Started.UTC().Format("20060102T150405Z"))
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadMachine describes this machine.
func ReadMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemoryMB = memTotalMB(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAvg = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	return m
}

// memTotalMB reads MemTotal (kB) from /proc/meminfo's text.
func memTotalMB(meminfo string) int64 {
	for _, line := range strings.Split(meminfo, "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
			return kb / 1024
		}
	}
	return 0
}
