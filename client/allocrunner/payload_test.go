package allocrunner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover/structs"
)

// The payload lands at local/<file>, directories made; no payload or no
// dispatch_payload writes nothing; a file out of the task directory is
// refused.
func TestWritePayload(t *testing.T) {
	d := NewAllocDir(t.TempDir(), "a1")
	if err := d.Build([]string{"t"}); err != nil {
		t.Fatal(err)
	}
	task := &structs.Task{Name: "t", DispatchPayload: &structs.DispatchPayloadConfig{File: "in/data.json"}}
	if err := d.WritePayload(task, []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d.TaskLocalDir("t"), "in", "data.json")); err != nil || string(b) != `{"x":1}` {
		t.Fatalf("payload %q %v", b, err)
	}
	other := &structs.Task{Name: "t", DispatchPayload: &structs.DispatchPayloadConfig{File: "empty"}}
	if err := d.WritePayload(other, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d.TaskLocalDir("t"), "empty")); !os.IsNotExist(err) {
		t.Fatalf("an empty payload wrote a file: %v", err)
	}
	if err := d.WritePayload(&structs.Task{Name: "t"}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	bad := &structs.Task{Name: "t", DispatchPayload: &structs.DispatchPayloadConfig{File: "../../escape"}}
	if err := d.WritePayload(bad, []byte("x")); err == nil {
		t.Fatal("a file out of the task directory was written")
	}
}
