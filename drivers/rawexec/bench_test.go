package rawexec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// BenchmarkStartStop measures one raw_exec task started (a real sleep
// process in its own group, log files opened, exit watched) and stopped
// with SIGTERM.
func BenchmarkStartStop(b *testing.B) {
	d := New(Options{})
	root := b.TempDir()
	logs := filepath.Join(root, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		name := fmt.Sprint("t", i)
		i++
		cfg := &drivers.TaskConfig{
			AllocID: "bench", TaskName: name, TaskDir: root,
			Config:     map[string]any{"command": "/bin/sleep", "args": []any{"300"}},
			StdoutPath: filepath.Join(logs, name+".stdout"), StderrPath: filepath.Join(logs, name+".stderr"),
			LogConfig: *structs.DefaultLogConfig(),
		}
		h, err := d.Start(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Stop(h, 5*time.Second, ""); err != nil {
			b.Fatal(err)
		}
		if err := d.Destroy(h); err != nil {
			b.Fatal(err)
		}
	}
}
