package robustness

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var (
	droverBin string
	// -chaos.duration runs the long form (make chaos); without it only
	// the smoke scenario runs.
	chaosDuration = flag.Duration("chaos.duration", 0, "run the long fault schedule for this long (0: the smoke scenario only)")
	chaosSeed     = flag.Int64("chaos.seed", 0, "seed of the fault schedule (0: from the clock); printed by each run")
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "drover-robustness-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	_ = os.Chmod(dir, 0o755) // servers run as their own users
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
	_ = os.Chmod(droverBin, 0o755)
	return m.Run()
}
