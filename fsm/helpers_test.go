package fsm

import (
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state"
)

// tlogWriter sends log lines to t.Log so they show only on failure.
type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

func newTestFSM(t testing.TB) *FSM {
	return New(hclog.New(&hclog.LoggerOptions{Name: "test", Output: tlogWriter{t}, Level: hclog.Debug}))
}

func entry(t testing.TB, mt MessageType, req any) []byte {
	t.Helper()
	b, err := Encode(mt, req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// applyOK applies req at index and fails the test on an error response.
func applyOK(t testing.TB, f *FSM, index uint64, mt MessageType, req any) any {
	t.Helper()
	resp := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: entry(t, mt, req)})
	if err, ok := resp.(error); ok {
		t.Fatalf("apply %s at %d: %v", mt, index, err)
	}
	return resp
}

func snap(f *FSM) *state.Snapshot { return f.State().Snapshot() }

func dump(t testing.TB, f *FSM) string {
	t.Helper()
	b, err := snap(f).Dump()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
