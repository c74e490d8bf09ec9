package fsm

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

// previousRecording is e2e's upgradeRecording: the Raft log a server of
// the previous release (upgrade/PREVIOUS) wrote, and the index of the
// snapshot recorded beside it.
type previousRecording struct {
	Commit        string
	SnapshotIndex uint64
	Entries       []struct {
		Index uint64
		Term  uint64
		Type  raft.LogType
		Data  []byte
	}
}

// previousCommit is the commit upgrade/PREVIOUS names.
func previousCommit(t *testing.T) string {
	t.Helper()
	f, err := os.Open("../upgrade/PREVIOUS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	t.Fatal("upgrade/PREVIOUS names no commit")
	return ""
}

func readPrevious(t *testing.T) *previousRecording {
	t.Helper()
	f, err := os.Open("testdata/previous/log.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var rec previousRecording
	if err := json.NewDecoder(zr).Decode(&rec); err != nil {
		t.Fatal(err)
	}
	return &rec
}

// readPreviousSnapshot restores the recorded snapshot archive's state into
// a new state machine.
func readPreviousSnapshot(t *testing.T) *FSM {
	t.Helper()
	f, err := os.Open("testdata/previous/snapshot.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("the archive holds no state.bin")
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "state.bin" {
			g := newTestFSM(t)
			if err := g.Restore(io.NopCloser(tr)); err != nil {
				t.Fatalf("restoring the previous release's snapshot: %v", err)
			}
			return g
		}
	}
}

// The version-skew rule, kept: this build's state machine applies every
// entry of the log a server of the previous release wrote (recorded from
// upgrade/PREVIOUS by e2e's TestUpgradeRecordPrevious: ACLs, variables and
// the keyring, nodes, a rollout with a canary promoted, a scale, a job
// stopped, the autopilot configuration) without an entry it cannot decode
// or does not know, restores that server's snapshot, and reaches from the
// log the very state the snapshot holds.
func TestPreviousReleaseLog(t *testing.T) {
	rec := readPrevious(t)
	if want := previousCommit(t); rec.Commit != want {
		t.Fatalf("testdata/previous was recorded from %s, upgrade/PREVIOUS names %s: record it again "+
			"(go test ./e2e -run TestUpgradeRecordPrevious -upgrade.record ../fsm/testdata/previous)", rec.Commit, want)
	}
	f := newTestFSM(t)
	types := map[MessageType]int{}
	var last uint64
	for _, e := range rec.Entries {
		if e.Index > rec.SnapshotIndex {
			break
		}
		last = e.Index
		if e.Type != raft.LogCommand {
			continue
		}
		types[MessageType(e.Data[0])]++
		resp := f.Apply(&raft.Log{Index: e.Index, Term: e.Term, Type: e.Type, Data: e.Data})
		if err, ok := resp.(error); ok && !isRejection(err) {
			t.Errorf("entry %d (%s) of the previous release: %v", e.Index, MessageType(e.Data[0]), err)
		}
	}
	if last != rec.SnapshotIndex {
		t.Fatalf("the log ends at %d, before the snapshot's index %d", last, rec.SnapshotIndex)
	}
	for _, want := range []MessageType{NodeRegisterRequestType, JobRegisterRequestType, ApplyPlanResultsRequestType,
		AllocClientUpdateRequestType, DeploymentPromoteRequestType, VarApplyRequestType, RootKeyUpsertRequestType,
		ACLTokenBootstrapRequestType, ACLPolicyUpsertRequestType, ACLTokenDeleteRequestType, JobDeregisterRequestType} {
		if types[want] == 0 {
			t.Errorf("the recorded log holds no %s entry (types: %v)", want, types)
		}
	}
	got, want := dump(t, f), dump(t, readPreviousSnapshot(t))
	if !strings.Contains(got, `"rec"`) || !strings.Contains(got, "app/config") {
		t.Fatalf("the state applied holds neither the job nor the variable:\n%.2000s", got)
	}
	if got != want {
		t.Fatalf("the state applied from the previous release's log differs from its snapshot: %s", firstDiff(got, want))
	}
}
