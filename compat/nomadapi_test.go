package compat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The suite is Nomad's Go client module at this version, obtained through
// the Go module proxy only (a module zip holds the _test.go files and the
// test helpers under internal/testutil). It is the newest the proxy
// serves: hashicorp/nomad's commit df630b26e78a of 2026-10-16.
const (
	nomadAPIModule  = "github.com/hashicorp/nomad/api"
	nomadAPIVersion = "v0.0.0-20261016150620-df630b26e78a"
)

// The suite's bounds: its own tests wait up to 10s for each agent, and
// block on queries for up to a few seconds; the tests are t.Parallel and
// spend their time waiting on agents, not computing.
const (
	suiteTimeout  = 10 * time.Minute
	suiteParallel = "4"
	passingList   = "testdata/nomadapi/passing.txt"
	// flakyList names the tests that pass or fail with the machine's load
	// whatever the agent does (millisecond timings of the client's own
	// helpers, no agent involved), each with why: never required, never
	// written into passingList.
	flakyList = "testdata/nomadapi/flaky.txt"
)

var updateList = flag.Bool("nomadapi.update", false, "rewrite "+passingList+" with the tests that pass")

// TestNomadAPISuite runs Nomad's API test suite with drover on PATH as
// nomad. It fails when a test listed in passing.txt does not pass (in the
// suite's run, and again run alone), and
// logs the tests that pass without being listed; -nomadapi.update (or
// DROVER_NOMAD_API_UPDATE=1) rewrites the list. It runs when
// DROVER_NOMAD_API_SUITE=1: make nomad-api-suite, which make test runs
// once every package's tests are done, so that the suite's agents do not
// start on a machine busy with the other packages.
func TestNomadAPISuite(t *testing.T) {
	if os.Getenv("DROVER_NOMAD_API_SUITE") != "1" {
		t.Skip("DROVER_NOMAD_API_SUITE=1 runs Nomad's API test suite (make nomad-api-suite)")
	}
	update := *updateList || os.Getenv("DROVER_NOMAD_API_UPDATE") == "1"
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command: %v", err)
	}
	work := t.TempDir()

	// The suite, through the module proxy, copied out of the read-only
	// module cache.
	src := downloadModule(t, goTool, work)
	suite := filepath.Join(work, "api")
	copyTree(t, src, suite)

	// drover, named nomad, first on PATH.
	bin := filepath.Join(work, "bin")
	build := exec.Command(goTool, "build", "-o", filepath.Join(bin, "nomad"), "./cmd/drover")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/drover: %v\n%s", err, out)
	}

	logPath := filepath.Join(os.TempDir(), "drover-nomad-api-suite.json")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	run := exec.Command(goTool, "test", "-json", "-count=1", "-timeout", suiteTimeout.String(), "-parallel", suiteParallel, ".")
	run.Dir = suite
	run.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	run.Stdout, run.Stderr = logFile, &stderr
	start := time.Now()
	runErr := run.Run()
	wall := time.Since(start)
	if err := logFile.Sync(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	res := parseTestJSON(raw)
	if len(res.status) == 0 {
		t.Fatalf("the suite ran no test (%v):\n%s", runErr, stderr.String())
	}
	flaky := readList(t, flakyList, false)
	var passed []string
	for name, st := range res.status {
		if st == "pass" && !slices.Contains(flaky, name) {
			passed = append(passed, name)
		}
	}
	slices.Sort(passed)
	t.Logf("Nomad's API suite (%s@%s): %d of %d top-level tests passed (%d skipped), wall time %s; the go test -json log is %s",
		nomadAPIModule, nomadAPIVersion, len(passed), len(res.status), res.count("skip"), wall.Round(time.Second), logPath)

	if update {
		writeList(t, passed)
		t.Logf("wrote %s (%d tests)", passingList, len(passed))
		return
	}
	want := readList(t, passingList, true)
	var lost, gained []string
	for _, name := range want {
		if res.status[name] != "pass" {
			lost = append(lost, name)
		}
	}
	for _, name := range passed {
		if !slices.Contains(want, name) {
			gained = append(gained, name)
		}
	}
	if len(gained) > 0 {
		t.Logf("%d tests pass that %s does not list (DROVER_NOMAD_API_UPDATE=1 make nomad-api-suite adds them):\n  %s",
			len(gained), passingList, strings.Join(gained, "\n  "))
	}
	for _, name := range flaky {
		if st := res.status[name]; st != "pass" {
			t.Logf("%s (in %s, not required): %s", name, flakyList, st)
		}
	}
	if len(lost) == 0 {
		return
	}
	// A listed test that failed runs once more, alone with the others that
	// failed: a test that fails under the suite's load and passes on its
	// own is logged, not failed; one that fails twice is.
	var quoted []string
	for _, name := range lost {
		quoted = append(quoted, regexp.QuoteMeta(name))
	}
	again := exec.Command(goTool, "test", "-json", "-count=1", "-timeout", suiteTimeout.String(),
		"-run", "^("+strings.Join(quoted, "|")+")$", ".")
	again.Dir, again.Env = suite, run.Env
	out, _ := again.Output()
	retry := parseTestJSON(out)
	for _, name := range lost {
		if retry.status[name] == "pass" {
			t.Logf("%s failed in the suite's run and passed run again alone:\n%s", name, res.tail(name, 20))
			continue
		}
		st := res.status[name]
		if st == "" {
			st = "did not run"
		}
		t.Errorf("%s passed before and now: %s, and run again: %s\n%s", name, st, retry.status[name], retry.tail(name, 40))
	}
}

// downloadModule fetches the suite's module with go mod download and
// returns its directory in the module cache.
func downloadModule(t *testing.T, goTool, work string) string {
	t.Helper()
	cmd := exec.Command(goTool, "mod", "download", "-json", nomadAPIModule+"@"+nomadAPIVersion)
	cmd.Dir = work // outside drover's module: only the proxy decides
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); err != nil || jerr != nil || info.Error != "" || info.Dir == "" {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go mod download %s@%s: %v %s %s %s", nomadAPIModule, nomadAPIVersion, err, info.Error, out, msg)
	}
	return info.Dir
}

// copyTree copies the module's files, writable.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy the suite: %v", err)
	}
}

// results are the top-level tests' outcomes of a go test -json run, and
// each test's output.
type results struct {
	status map[string]string // pass, fail or skip; a test that never ended is absent
	output map[string][]string
}

func parseTestJSON(raw []byte) results {
	r := results{status: map[string]string{}, output: map[string][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct{ Action, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" {
			continue
		}
		top, _, _ := strings.Cut(ev.Test, "/")
		switch ev.Action {
		case "output":
			r.output[top] = append(r.output[top], strings.TrimRight(ev.Output, "\n"))
		case "pass", "fail", "skip":
			if top == ev.Test {
				r.status[top] = ev.Action
			}
		}
	}
	return r
}

func (r results) count(action string) int {
	n := 0
	for _, st := range r.status {
		if st == action {
			n++
		}
	}
	return n
}

// tail is the last n lines of a test's output.
func (r results) tail(name string, n int) string {
	out := r.output[name]
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return "    " + strings.Join(out, "\n    ")
}

// readList reads the test names of a list, the first word of each line
// that is not blank or a # comment; a list not required may be missing.
func readList(t *testing.T, path string, required bool) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !required && errors.Is(err, fs.ErrNotExist) {
		t.Logf("%s: %v: no test is taken as flaky", path, err)
		return nil
	}
	if err != nil {
		t.Fatalf("%v (DROVER_NOMAD_API_UPDATE=1 make nomad-api-suite writes %s)", err, passingList)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			out = append(out, f[0])
		}
	}
	return out
}

func writeList(t *testing.T, passed []string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# The top-level tests of Nomad's API suite (%s@%s) that pass with drover as nomad.\n", nomadAPIModule, nomadAPIVersion)
	b.WriteString("# TestNomadAPISuite fails when one of them stops passing; DROVER_NOMAD_API_UPDATE=1 make nomad-api-suite rewrites this file.\n")
	for _, name := range passed {
		b.WriteString(name + "\n")
	}
	if err := os.WriteFile(passingList, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
