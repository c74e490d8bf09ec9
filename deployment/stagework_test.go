package deployment

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// StagePlaced: a health report frees no placement only when every group
// has its current stage placed.
func TestStagePlaced(t *testing.T) {
	zoned := func(surge bool) *structs.Job {
		u := &structs.UpdateStrategy{MaxParallel: 2, Zones: &structs.ZoneStrategy{Attribute: "${meta.zone}", Mode: structs.ZoneModeByZone}}
		if surge {
			u.MaxSurge = &structs.Amount{Value: 1}
		}
		return &structs.Job{TaskGroups: []*structs.TaskGroup{{Name: "web", Update: u}, {Name: "db", Update: &structs.UpdateStrategy{MaxParallel: 1}}}}
	}
	zones := func(a, b *structs.ZoneState) []*structs.ZoneState { return []*structs.ZoneState{a, b} }
	placedA := &structs.ZoneState{Name: "a", Size: 2, Healthy: 1, InFlight: 1, State: structs.ZoneStateRolling}
	halfA := &structs.ZoneState{Name: "a", Size: 2, Healthy: 1, State: structs.ZoneStateRolling}
	failedA := &structs.ZoneState{Name: "a", Size: 2, Healthy: 1, Failed: 1, State: structs.ZoneStateRolling}
	waitB := &structs.ZoneState{Name: "b", Size: 2, State: structs.ZoneStateWaiting}
	rollB := &structs.ZoneState{Name: "b", Size: 2, State: structs.ZoneStateRolling}
	for _, tc := range []struct {
		name    string
		web     *structs.DeploymentState
		db      *structs.DeploymentState
		job     *structs.Job
		want    bool
		restart bool
	}{
		{"zone placed, next waits", &structs.DeploymentState{Zones: zones(placedA, waitB)}, &structs.DeploymentState{AllPlaced: true}, zoned(false), true, false},
		{"zone half placed", &structs.DeploymentState{Zones: zones(halfA, waitB)}, &structs.DeploymentState{AllPlaced: true}, zoned(false), false, false},
		{"a failure to replace", &structs.DeploymentState{Zones: zones(failedA, waitB)}, &structs.DeploymentState{AllPlaced: true}, zoned(false), false, false},
		{"both zones rolling", &structs.DeploymentState{Zones: zones(placedA, rollB)}, &structs.DeploymentState{AllPlaced: true}, zoned(false), false, false},
		{"max_surge", &structs.DeploymentState{Zones: zones(placedA, waitB)}, &structs.DeploymentState{AllPlaced: true}, zoned(true), false, false},
		{"another group has work", &structs.DeploymentState{Zones: zones(placedA, waitB)}, &structs.DeploymentState{}, zoned(false), false, false},
		{"unknown job", &structs.DeploymentState{Zones: zones(placedA, waitB)}, &structs.DeploymentState{AllPlaced: true}, nil, false, false},
		{"a restart", &structs.DeploymentState{Zones: zones(placedA, waitB)}, &structs.DeploymentState{AllPlaced: true}, zoned(false), false, true},
		{"ordered: one placed, one waits", &structs.DeploymentState{Order: 2, State: structs.GroupStateWaiting},
			&structs.DeploymentState{Order: 1, State: structs.GroupStateRolling, AllPlaced: true}, zoned(false), true, false},
		{"ordered: the rolling group has work", &structs.DeploymentState{Order: 2, State: structs.GroupStateWaiting},
			&structs.DeploymentState{Order: 1, State: structs.GroupStateRolling}, zoned(false), false, false},
	} {
		d := &structs.Deployment{TaskGroups: map[string]*structs.DeploymentState{"web": tc.web, "db": tc.db}}
		if tc.restart {
			d.Restart = &structs.RestartSpec{}
		}
		if got := StagePlaced(d, tc.job); got != tc.want {
			t.Errorf("%s: StagePlaced = %v, want %v", tc.name, got, tc.want)
		}
	}
	if StagePlaced(nil, nil) || StagePlaced(&structs.Deployment{}, nil) {
		t.Error("no deployment, or one without groups, has no stage placed")
	}
}
