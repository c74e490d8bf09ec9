package deployment

import "github.com/droverhq/drover/structs"

// NeedsAllocs reports whether deciding on d needs its allocations one by
// one: when one of them is (or was) unhealthy, to be replaced or to fail
// the deployment. Otherwise the live figures the store keeps in d say all
// Decide needs (see Observation.FromFigures), and the watcher neither
// reads the allocations nor is woken by their every change.
func NeedsAllocs(d *structs.Deployment) bool {
	if d == nil {
		return false
	}
	for _, s := range d.TaskGroups {
		if s != nil && (s.UnhealthyAllocs > 0 || s.MarkedUnhealthyAllocs > 0) {
			return true
		}
	}
	return false
}
