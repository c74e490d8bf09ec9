// Package e2e runs drover as real processes: servers on 127.0.0.1 with
// real Raft over TCP and bolt files on disk.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// droverBin is the binary built once for every test.
var droverBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "drover-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// DROVER_E2E_BIN runs the tests against a binary built elsewhere.
	if bin := os.Getenv("DROVER_E2E_BIN"); bin != "" {
		droverBin = bin
		return m.Run()
	}
	droverBin = filepath.Join(dir, "drover")
	build := exec.Command("go", "build", "-o", droverBin, "./cmd/drover")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building drover:", err)
		return 1
	}
	return m.Run()
}
