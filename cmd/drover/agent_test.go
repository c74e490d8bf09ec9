package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentRefusesIncompleteConfiguration(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"agent"}, "-server"},
		{[]string{"agent", "-server"}, "-data-dir"},
		{[]string{"agent", "-dev", "-log-level", "loud"}, "log-level"},
		{[]string{"agent", "-server", "-data-dir", t.TempDir(), "-bootstrap-expect", "-1"}, "bootstrap-expect"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, "", c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Fatalf("%v: code %d, stderr %q (want it to mention %q)", c.args, code, errOut, c.want)
		}
	}
}

func TestAgentReportsEveryConfigurationProblemWithItsPlace(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.hcl")
	b := filepath.Join(dir, "b.hcl")
	if err := os.WriteFile(a, []byte("server {\n  enabled = true\n  bootstrap_expect = \"three\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("data_dir = \"/tmp/x\"\nbogus = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "", "agent", "-config", a, "-config", b, "-servers", "nohost")
	if code == 0 {
		t.Fatal("an invalid configuration started")
	}
	for _, want := range []string{a + ":3:", b + ":2:", "bogus"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not mention %q:\n%s", want, errOut)
		}
	}
	// Files that parse are checked with the flags: every problem at once.
	if err := os.WriteFile(a, []byte("server {\n  enabled = true\n  bootstrap_expect = 0\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "", "agent", "-config", a, "-log-level", "loud", "-datacenter", "")
	if code == 0 {
		t.Fatal("an invalid configuration started")
	}
	for _, want := range []string{a + ":3:", "-log-level", "data_dir", "-dc"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not mention %q:\n%s", want, errOut)
		}
	}
}
