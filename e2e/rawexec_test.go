package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// rawExecConfig is a client configuration that enables the raw_exec
// driver, which is off outside -dev, as Nomad's.
const rawExecConfig = `plugin "raw_exec" {
  config {
    enabled = true
  }
}
`

// withRawExec adds -config with rawExecConfig to the arguments of a
// non-dev client agent: the tests' clients run raw_exec tasks, and enable
// the driver explicitly as a real deployment must.
func withRawExec(t testing.TB, args []string) []string {
	t.Helper()
	if !slices.Contains(args, "-client") || slices.Contains(args, "-dev") {
		return args
	}
	path := filepath.Join(t.TempDir(), "raw_exec.hcl")
	if err := os.WriteFile(path, []byte(rawExecConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(slices.Clone(args), "-config", path)
}
