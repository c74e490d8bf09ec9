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

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "Drover v") {
		t.Fatalf("version: code %d, out %q", code, out)
	}
}

func TestUnknownCommandFails(t *testing.T) {
	code, _, errOut := runCLI(t, "", "jbo")
	if code == 0 || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}
