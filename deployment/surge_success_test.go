package deployment

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// A successful deployment of a group with max_surge asks for one more
// scheduling pass: old allocs may still run beside their last
// replacements, and only a pass stops them. Without surge it asks for
// none.
func TestSuccessWithSurgeAsksForAPass(t *testing.T) {
	for _, surge := range []bool{false, true} {
		u := structs.DefaultUpdateStrategy()
		if surge {
			u.MaxSurge = structs.Count(1)
		}
		job := &structs.Job{ID: "web", Version: 1, TaskGroups: []*structs.TaskGroup{{Name: "web", Count: 2, Update: u}}}
		d := &structs.Deployment{ID: "d1", JobID: "web", JobVersion: 1, Status: structs.DeploymentStatusRunning,
			StatusDescription: structs.DeploymentStatusDescriptionRunning,
			TaskGroups:        map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, LiveHealthyAllocs: 2}}}
		dec := Decide(Observation{Deployment: d, Job: job, LatestJob: job, FromFigures: true, Now: t0})
		if dec.Status != structs.DeploymentStatusSuccessful {
			t.Fatalf("surge %t: status %q, want successful", surge, dec.Status)
		}
		if dec.CreateEval != surge {
			t.Errorf("surge %t: CreateEval %t", surge, dec.CreateEval)
		}
	}
}
