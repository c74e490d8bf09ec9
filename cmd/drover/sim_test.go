package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "run"}, "-servers is required"},
		{[]string{"sim", "bench", "-dev", "-cluster3"}, "exclude each other"},
		{[]string{"sim", "bench", "-dev", "-servers", "127.0.0.1:1"}, "-servers excludes"},
		{[]string{"sim", "bench", "-scenario", "nope", "-servers", "127.0.0.1:1", "-out", t.TempDir()}, "unknown scenario"},
		{[]string{"sim", "bench", "-scenario", "failover", "-dev", "-out", t.TempDir()}, "needs three servers"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, "", c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: code %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

func TestSplitAddrs(t *testing.T) {
	got := splitAddrs(" a:1, ,b:2,")
	if len(got) != 2 || got[0] != "a:1" || got[1] != "b:2" {
		t.Errorf("splitAddrs = %q", got)
	}
}

// TestSimBenchInProcess runs a tiny place scenario through the command,
// against a server in this process, and checks the table and the JSON
// result.
func TestSimBenchInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "", "sim", "bench", "-scenario", "place", "-inprocess",
		"-nodes", "20", "-count", "100", "-timeout", "2m", "-out", out)
	if code != 0 {
		t.Fatalf("code %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "time_to_all_running_s") || !strings.Contains(stderr, "register") {
		t.Errorf("table or progress missing:\nstdout: %s\nstderr: %q", stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "place-inprocess-*.json"))
	if len(files) != 1 {
		t.Fatalf("results: %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Scenario string
		Params   map[string]any
		Figures  []struct{ Name string }
	}
	if err := json.Unmarshal(b, &res); err != nil || res.Scenario != "place" || res.Params["count"] != float64(100) {
		t.Fatalf("result %s: %v", b, err)
	}
}
