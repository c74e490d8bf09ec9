package allocrunner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/structs"
)

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMoveDataTakesOverDataAndLocal(t *testing.T) {
	data := t.TempDir()
	from, to := NewAllocDir(data, "old"), NewAllocDir(data, "new")
	tasks := []*structs.Task{{Name: "web"}, {Name: "side"}}
	for _, d := range []AllocDir{from, to} {
		if err := d.Build([]string{"web", "side"}); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(from.SharedDir(), "data", "db", "rows"), "rows")
	writeFile(t, filepath.Join(from.TaskLocalDir("web"), "cache"), "old cache")
	writeFile(t, filepath.Join(from.TaskLocalDir("web"), "payload"), "old payload")
	writeFile(t, filepath.Join(from.TaskLocalDir("side"), "x"), "x")
	// The new alloc's dispatch payload is written before its tasks wait.
	writeFile(t, filepath.Join(to.TaskLocalDir("web"), "payload"), "new payload")
	// A task of the old version only: not taken.
	writeFile(t, filepath.Join(from.TaskLocalDir("gone"), "y"), "y")

	if err := moveData(from, to, tasks); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		filepath.Join(to.SharedDir(), "data", "db", "rows"): "rows",
		filepath.Join(to.TaskLocalDir("web"), "cache"):      "old cache",
		filepath.Join(to.TaskLocalDir("web"), "payload"):    "new payload",
		filepath.Join(to.TaskLocalDir("side"), "x"):         "x",
	} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Fatalf("%s: %q %v, want %q", p, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(to.Root, "gone")); !os.IsNotExist(err) {
		t.Fatalf("a task the new version lacks was taken over: %v", err)
	}
	// Again (a client restarted after the move): nothing left, no error.
	if err := moveData(from, to, tasks); err != nil {
		t.Fatal(err)
	}
}

func TestMoveDataFollowsNoLinkOutOfTheAllocations(t *testing.T) {
	data := t.TempDir()
	host := t.TempDir()
	writeFile(t, filepath.Join(host, "data", "secret"), "host")
	from, to := NewAllocDir(data, "old"), NewAllocDir(data, "new")
	tasks := []*structs.Task{{Name: "web"}}
	for _, d := range []AllocDir{from, to} {
		if err := d.Build([]string{"web"}); err != nil {
			t.Fatal(err)
		}
	}
	// The old task put a link to a host directory in place of alloc/data:
	// it is not moved, and the host's files stay where they are.
	if err := os.RemoveAll(filepath.Join(from.SharedDir(), "data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(host, "data"), filepath.Join(from.SharedDir(), "data")); err != nil {
		t.Fatal(err)
	}
	if err := moveData(from, to, tasks); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(to.SharedDir(), "data")); err != nil || !fi.IsDir() {
		t.Fatalf("new alloc/data: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(host, "data", "secret")); err != nil {
		t.Fatal(err)
	}
	// A link on the way (the old task's directory made a link to the
	// host) is refused, not followed.
	if err := os.RemoveAll(filepath.Join(from.Root, "web")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(from.Root, "web")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(host, "local", "f"), "host")
	err := moveData(from, to, tasks)
	if !errors.Is(err, allocfs.ErrEscapes) {
		t.Fatalf("move through a link out: %v, want ErrEscapes", err)
	}
	if _, err := os.Stat(filepath.Join(host, "local", "f")); err != nil {
		t.Fatal(err)
	}
}
