package scheduler

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// The plan of a job whose groups have no update block (a batch job, as
// Nomad's API submits it) places its allocs in one batch, and does not
// fail on the missing block.
func TestPlanRolloutOfAJobWithoutUpdate(t *testing.T) {
	job := &structs.Job{ID: "job1", Name: "redis", Namespace: "default", Type: structs.JobTypeBatch, Priority: 50,
		Datacenters: []string{"dc1"}, TaskGroups: []*structs.TaskGroup{{Name: "group1", Count: 2,
			Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/sleep"}}}}}}
	n := 0
	plan := PlanRollout(Input{Job: job, JobID: job.ID, Now: time.Unix(1000, 0), EvalPriority: 50,
		IDs: func() string { n++; return "id-" + string(rune('a'+n)) }})
	placed := 0
	for _, b := range plan {
		placed += len(b.Allocs)
	}
	if placed != 2 {
		t.Fatalf("plan: %+v", plan)
	}
}
