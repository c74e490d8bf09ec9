package exec

import (
	"context"
	"testing"
	"time"
)

// BenchmarkStartStop measures one exec task started (its container
// created: a root bound from the host's directories, namespaces, a
// cgroup; the binary re-executed as its init; busybox sleep running as
// nobody) and killed, its container destroyed. Compare raw_exec's
// BenchmarkStartStop.
func BenchmarkStartStop(b *testing.B) {
	if reason := Unsupported(); reason != "" {
		b.Skip(reason)
	}
	d, err := New(Options{StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cfg := newTask(b, "")
		cfg.Config = map[string]any{"command": busybox, "args": []any{"sleep", "300"}}
		h, err := d.Start(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Stop(h, 5*time.Second, "SIGKILL"); err != nil {
			b.Fatal(err)
		}
		if err := d.Destroy(h); err != nil {
			b.Fatal(err)
		}
	}
}
