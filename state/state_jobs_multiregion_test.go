package state

import (
	"errors"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestRegisterJobAtVersion: a region's copy of a multi-region job is
// stored at the version asked, identical or not; the same spec already at
// that version is a re-submission; a stored version at or past it with
// another spec is a conflict.
func TestRegisterJobAtVersion(t *testing.T) {
	s := newStore(t)
	job := statetest.Job("web", 2)
	at := func(index uint64, j *structs.Job, v uint64) (*structs.JobRegisterResult, error) {
		return s.RegisterJobAtVersion(index, &structs.JobRegisterAtVersionRequest{
			Register: structs.JobRegisterRequest{Job: j, Eval: statetest.Eval("e", j), SubmitTime: int64(index)}, Version: v})
	}
	// A new job at version 3 (another region was at 2).
	res, err := at(10, job, 3)
	must(t, err)
	if res.JobVersion != 3 || !res.SpecChanged {
		t.Fatalf("first = %+v", res)
	}
	// The same spec at the same version: nothing new.
	res, err = at(11, job, 3)
	must(t, err)
	if res.JobVersion != 3 || res.SpecChanged || res.JobModifyIndex != 10 {
		t.Fatalf("again = %+v", res)
	}
	// The same spec at a later version (another region changed): a new
	// version all the same.
	res, err = at(12, job, 5)
	must(t, err)
	if res.JobVersion != 5 || !res.SpecChanged {
		t.Fatalf("later = %+v", res)
	}
	if j := get[*structs.Job](t)(s.Snapshot().JobByID("default", "web")); j.Version != 5 || j.JobModifyIndex != 12 {
		t.Fatalf("stored v%d at %d", j.Version, j.JobModifyIndex)
	}
	if old := get[*structs.Job](t)(s.Snapshot().JobByIDAndVersion("default", "web", 3)); old == nil {
		t.Fatal("version 3 not kept")
	}
	// Another spec at a version not past the stored one: a conflict.
	changed := job.Copy()
	changed.TaskGroups[0].Count = 7
	if _, err := at(13, changed, 5); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale version: %v", err)
	}
	// A plain registration after them counts on from the stored version.
	res, err = s.RegisterJob(14, &structs.JobRegisterRequest{Job: changed, SubmitTime: 14})
	must(t, err)
	if res.JobVersion != 6 {
		t.Fatalf("plain = %+v", res)
	}
}
