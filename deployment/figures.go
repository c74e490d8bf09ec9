package deployment

import (
	"slices"

	"github.com/droverhq/drover/structs"
)

// UnhealthyIDs returns the IDs of the deployment's allocations marked
// unhealthy, and whether the store listed them all (UnhealthyAllocIDs;
// a deployment written before the list existed has none): the watcher
// then reads those allocations only.
func UnhealthyIDs(d *structs.Deployment) ([]string, bool) {
	if d == nil {
		return nil, false
	}
	var ids []string
	for _, s := range d.TaskGroups {
		if s == nil {
			continue
		}
		if len(s.UnhealthyAllocIDs) != s.MarkedUnhealthyAllocs {
			return nil, false
		}
		ids = append(ids, s.UnhealthyAllocIDs...)
	}
	slices.Sort(ids)
	return ids, true
}

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
