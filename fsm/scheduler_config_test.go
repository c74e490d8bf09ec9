package fsm

import (
	"bytes"
	"testing"

	"github.com/droverhq/drover/structs"
)

// The scheduler configuration is one replicated row: set, check-and-set,
// and carried by snapshots.
func TestSchedulerConfigIsReplicatedAndSnapshotted(t *testing.T) {
	f := newTestFSM(t)
	if c, err := snap(f).SchedulerConfig(); err != nil || c != nil {
		t.Fatalf("empty store: %+v, %v", c, err)
	}
	if c, err := snap(f).EffectiveSchedulerConfig(); err != nil || c != structs.DefaultSchedulerConfiguration() {
		t.Fatalf("empty store's effective configuration: %+v, %v", c, err)
	}
	cfg := structs.SchedulerConfiguration{
		SchedulerAlgorithm: "spread", PauseEvalBroker: true, RejectJobRegistration: true,
		PreemptionConfig:              structs.PreemptionConfig{SystemSchedulerEnabled: true, ServiceSchedulerEnabled: true},
		NodeLimitForFeasibilityChecks: 123,
	}
	if ok := applyOK(t, f, 5, SchedulerSetConfigRequestType, &structs.SchedulerSetConfigRequest{Config: cfg}); ok != true {
		t.Fatalf("set answered %v", ok)
	}
	// A check-and-set against a stale index changes nothing.
	stale := cfg
	stale.SchedulerAlgorithm, stale.ModifyIndex = "binpack", 4
	if ok := applyOK(t, f, 6, SchedulerSetConfigRequestType, &structs.SchedulerSetConfigRequest{Config: stale, CAS: true}); ok != false {
		t.Fatalf("stale CAS answered %v", ok)
	}
	fresh := cfg
	fresh.PauseEvalBroker, fresh.ModifyIndex = false, 5
	if ok := applyOK(t, f, 7, SchedulerSetConfigRequestType, &structs.SchedulerSetConfigRequest{Config: fresh, CAS: true}); ok != true {
		t.Fatalf("CAS answered %v", ok)
	}
	got, err := snap(f).SchedulerConfig()
	if err != nil || got == nil {
		t.Fatal(got, err)
	}
	want := fresh
	want.CreateIndex, want.ModifyIndex = 5, 7
	if *got != want {
		t.Fatalf("stored %+v, want %+v", got, want)
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
	if c, _ := snap(g).SchedulerConfig(); c == nil || *c != *got {
		t.Fatalf("restored %+v, want %+v", c, got)
	}
}
