package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs drover in-process and returns its exit code and output.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// The version command, and Nomad's top-level flags for it (Nomad's API
// test server runs "nomad -version" before it starts an agent).
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "-version", "--version", "-v"} {
		code, out, _ := runCLI(t, "", arg)
		if code != 0 || !strings.HasPrefix(out, "Drover v") {
			t.Fatalf("%s: code %d, out %q", arg, code, out)
		}
	}
}

func TestUnknownCommandFails(t *testing.T) {
	code, _, errOut := runCLI(t, "", "jbo")
	if code == 0 || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}
