package deployment

import "github.com/droverhq/drover/structs"

// StagePlaced reports whether a healthy verdict in d frees no placement
// until the watcher moves a stage on: every group has all its allocs
// placed (DeploymentState.AllPlaced), waits its turn (group_order), or,
// rolling by zones without max_surge, has every alloc of its rolling
// zones placed (Healthy + InFlight reach the zone's Size) while its
// other zones wait or are done. job is the deployment's job version (nil:
// only AllPlaced and waiting groups count).
//
// A scheduling pass asked for on such a verdict places nothing; the next
// stage's (the zone or group that starts, the resume) is asked for by the
// watcher's decision that starts it, in the same write. The two passes
// queue one behind the other, as the scheduler takes one evaluation of a
// job at a time, so the first one would delay every change of stage by a
// scheduling pass. The leader's health evaluations (server/healtheval.go)
// and Decide's new-health rule both skip such a deployment.
//
// A group with max_surge is never stage-placed by its zones: an old alloc
// beside a healthy surge replacement is stopped by a pass. A job restart
// is not either: it rolls by its own batches.
func StagePlaced(d *structs.Deployment, job *structs.Job) bool {
	if d == nil || len(d.TaskGroups) == 0 {
		return false
	}
	for name, s := range d.TaskGroups {
		if s == nil {
			return false
		}
		if s.AllPlaced || s.Order > 0 && s.State == structs.GroupStateWaiting {
			continue
		}
		if d.Restart != nil || job == nil || len(s.Zones) == 0 {
			return false
		}
		tg := job.LookupTaskGroup(name)
		if tg == nil || tg.Update == nil || tg.Update.Zones == nil || tg.Update.MaxSurge != nil {
			return false
		}
		if !zonesPlaced(s.Zones) {
			return false
		}
	}
	return true
}

// zonesPlaced reports whether every alloc of the rolling zones is placed
// and at least one zone waits for its turn: the group places nothing more
// until a zone starts.
func zonesPlaced(zones []*structs.ZoneState) bool {
	waiting := false
	for _, z := range zones {
		if z == nil {
			return false
		}
		switch z.State {
		case structs.ZoneStateWaiting:
			waiting = true
		case structs.ZoneStateDone:
		case structs.ZoneStateRolling:
			if z.Healthy+z.InFlight < z.Size {
				return false
			}
		default:
			return false
		}
	}
	return waiting
}
