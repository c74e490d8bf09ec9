package fsm

import (
	"bytes"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// The autopilot configuration is one replicated row: set, check-and-set,
// and carried by snapshots.
func TestAutopilotConfigIsReplicatedAndSnapshotted(t *testing.T) {
	f := newTestFSM(t)
	if c, err := snap(f).AutopilotConfig(); err != nil || c != nil {
		t.Fatalf("empty store: %+v, %v", c, err)
	}
	cfg := structs.DefaultAutopilotConfig()
	cfg.ServerStabilizationTime = time.Second
	if ok := applyOK(t, f, 5, AutopilotSetConfigRequestType, &structs.AutopilotSetConfigRequest{Config: cfg}); ok != true {
		t.Fatalf("set answered %v", ok)
	}
	// A check-and-set against a stale index changes nothing.
	stale := cfg
	stale.MinQuorum, stale.ModifyIndex = 5, 4
	if ok := applyOK(t, f, 6, AutopilotSetConfigRequestType, &structs.AutopilotSetConfigRequest{Config: stale, CAS: true}); ok != false {
		t.Fatalf("stale CAS answered %v", ok)
	}
	fresh := stale
	fresh.ModifyIndex = 5
	if ok := applyOK(t, f, 7, AutopilotSetConfigRequestType, &structs.AutopilotSetConfigRequest{Config: fresh, CAS: true}); ok != true {
		t.Fatalf("CAS answered %v", ok)
	}
	got, err := snap(f).AutopilotConfig()
	if err != nil || got == nil {
		t.Fatal(got, err)
	}
	if got.MinQuorum != 5 || got.ServerStabilizationTime != time.Second || got.CreateIndex != 5 || got.ModifyIndex != 7 {
		t.Fatalf("stored %+v", got)
	}

	var buf bytes.Buffer
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	g := newTestFSM(t)
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, f), dump(t, g); a != b {
		t.Fatalf("restored state differs:\n%s", firstDiff(a, b))
	}
	if c, _ := snap(g).AutopilotConfig(); c == nil || *c != *got {
		t.Fatalf("restored %+v, want %+v", c, got)
	}
}
