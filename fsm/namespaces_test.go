package fsm

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestNamespaceEntries: NamespaceUpsert and NamespaceDelete apply, a
// refused delete is a rejection that changes nothing, both are gated at
// build 2, and a snapshot carries namespaces and job submissions.
func TestNamespaceEntries(t *testing.T) {
	for _, mt := range []MessageType{NamespaceUpsertRequestType, NamespaceDeleteRequestType} {
		if TypeBuild(mt) != 2 {
			t.Errorf("%s is gated at build %d, want 2", mt, TypeBuild(mt))
		}
	}
	f := newTestFSM(t)
	applyOK(t, f, 2, NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{
		{Name: "dev", Description: "d", Capabilities: &structs.NamespaceCapabilities{EnabledTaskDrivers: []string{"raw_exec"}}},
		{Name: "qa"},
	}})
	job := statetest.Job("web", 1)
	job.Namespace = "dev"
	applyOK(t, f, 3, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, SubmitTime: 3,
		Submission: &structs.JobSubmission{Source: "job {}", Format: "hcl2", Variables: "x = 1"}})
	resp := f.Apply(&raft.Log{Index: 4, Type: raft.LogCommand, Data: entry(t, NamespaceDeleteRequestType,
		&structs.NamespaceDeleteRequest{Namespaces: []string{"qa", "dev"}})})
	if err, ok := resp.(error); !ok || !errors.Is(err, state.ErrInvalid) || !strings.Contains(err.Error(), "non-terminal job") {
		t.Fatalf("delete of a namespace with a job: %v", resp)
	}
	applyOK(t, f, 5, NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{"qa"}})

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
	s := snap(g)
	if ns, _ := s.NamespaceByName("dev"); ns == nil || ns.Description != "d" || ns.CreateIndex != 2 {
		t.Errorf("restored dev: %+v", ns)
	}
	if ns, _ := s.NamespaceByName("qa"); ns != nil {
		t.Errorf("deleted qa restored: %+v", ns)
	}
	if sub, _ := s.JobSubmission("dev", "web", 0); sub == nil || sub.Source != "job {}" || sub.Variables != "x = 1" || sub.JobModifyIndex != 3 {
		t.Errorf("restored submission: %+v", sub)
	}
}
