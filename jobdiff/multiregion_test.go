package jobdiff

import (
	"strings"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestMultiregionChangeIsAJobChange: a change to the multiregion block
// alone (a region's count, a region added, the strategy) is a change of
// the job, in the plan's diff and for the store (SpecChanged), though no
// group changes in the region planning it.
func TestMultiregionChangeIsAJobChange(t *testing.T) {
	old := statetest.Job("web", 1)
	old.Multiregion = &structs.Multiregion{
		Strategy: &structs.MultiregionStrategy{MaxParallel: 1},
		Regions:  []*structs.MultiregionRegion{{Name: "east", Count: 1}, {Name: "west", Count: 2}},
	}
	for name, change := range map[string]func(j *structs.Job){
		"a region's count": func(j *structs.Job) { j.Multiregion.Regions[1].Count = 3 },
		"a region added": func(j *structs.Job) {
			j.Multiregion.Regions = append(j.Multiregion.Regions, &structs.MultiregionRegion{Name: "north", Count: 1})
		},
		"the strategy":  func(j *structs.Job) { j.Multiregion.Strategy.OnFailure = structs.MultiregionOnFailureFailAll },
		"a region's dc": func(j *structs.Job) { j.Multiregion.Regions[0].Datacenters = []string{"e1"} },
	} {
		t.Run(name, func(t *testing.T) {
			job := old.Copy()
			change(job)
			if !job.SpecChanged(old) {
				t.Fatal("SpecChanged is false")
			}
			d := Jobs(old, job, false)
			got := strings.Join(lines(d), "\n")
			if d.Type != TypeEdited || !strings.Contains(got, "Multiregion") {
				t.Fatalf("diff:\n%s", got)
			}
		})
	}
	if d := Jobs(old, old.Copy(), false); d.Type != TypeNone {
		t.Fatalf("no change: %s", strings.Join(lines(d), "\n"))
	}
}
