package structs

import "slices"

// AllocDeploymentShare is what one allocation adds to the live figures of
// its deployment (DeploymentState.LiveHealthyAllocs, LiveHealthyCanaries,
// MarkedUnhealthyAllocs and Deployment.HealthIndex). The state store keeps
// the figures as the sum of the shares of a deployment's allocations,
// applying the share of an allocation's new version minus that of its old
// one on every write; the deployment watcher decides from the sums. The
// zero value adds nothing.
type AllocDeploymentShare struct {
	// Group is the allocation's task group.
	Group string
	// Healthy: the allocation is healthy and not terminal.
	Healthy bool
	// Canary: Healthy, and the allocation is a canary.
	Canary bool
	// Unhealthy: the allocation is marked unhealthy, terminal or not.
	Unhealthy bool
	// HealthIndex is, when Healthy, the index its health was recorded at:
	// DeploymentStatus.ModifyIndex, or ModifyIndex when that is 0.
	HealthIndex uint64
	// Zone is the allocation's zone (Allocation.Zone), and InFlight says
	// it is not terminal and its health is unknown: with Healthy, what it
	// adds to its zone's figures (ZoneState.Healthy, InFlight) when its
	// group rolls out by zones.
	Zone     string
	InFlight bool
}

// DeploymentShare returns the allocation's share of its deployment's live
// figures. placedCanary reports whether the deployment lists an
// allocation ID among its placed canaries (nil: none); an allocation is a
// canary when listed or flagged (IsCanary). A nil allocation, or one of
// no deployment, has the zero share.
func (a *Allocation) DeploymentShare(placedCanary func(id string) bool) AllocDeploymentShare {
	if a == nil || a.DeploymentID == "" {
		return AllocDeploymentShare{}
	}
	s := AllocDeploymentShare{Group: a.TaskGroup, Unhealthy: a.IsUnhealthy(), Zone: a.Zone}
	if a.TerminalStatus() {
		return s
	}
	if a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil {
		s.InFlight = true
		return s
	}
	if !a.IsHealthy() {
		return s
	}
	s.Healthy = true
	s.Canary = a.IsCanary() || (placedCanary != nil && placedCanary(a.ID))
	s.HealthIndex = a.DeploymentStatus.ModifyIndex
	if s.HealthIndex == 0 {
		s.HealthIndex = a.ModifyIndex
	}
	return s
}

// ClearLiveFigures zeroes the live figures of the deployment, of each of
// its groups and of their zones (Healthy and InFlight; Failed is a
// counter), d being a copy its caller owns, for a store about to count
// them from the allocations.
func (d *Deployment) ClearLiveFigures() {
	d.HealthIndex = 0
	for _, s := range d.TaskGroups {
		if s != nil {
			s.LiveHealthyAllocs, s.LiveHealthyCanaries, s.MarkedUnhealthyAllocs = 0, 0, 0
			s.UnhealthyAllocIDs = nil
			for _, z := range s.Zones {
				if z != nil {
					z.Healthy, z.InFlight = 0, 0
				}
			}
		}
	}
}

// Zone returns the group's zone named name, or nil.
func (s *DeploymentState) Zone(name string) *ZoneState {
	if s == nil {
		return nil
	}
	for _, z := range s.Zones {
		if z != nil && z.Name == name {
			return z
		}
	}
	return nil
}

// PlacedCanaryIDs returns a predicate reporting whether an allocation ID
// is listed among the placed canaries of any group of d; nil when none is.
func (d *Deployment) PlacedCanaryIDs() func(id string) bool {
	if d == nil {
		return nil
	}
	var ids map[string]bool
	for _, s := range d.TaskGroups {
		if s == nil {
			continue
		}
		for _, id := range s.PlacedCanaries {
			if ids == nil {
				ids = map[string]bool{}
			}
			ids[id] = true
		}
	}
	if ids == nil {
		return nil
	}
	return func(id string) bool { return ids[id] }
}

// CountLiveFigures sets the live figures of d (a copy its caller owns)
// from allocs, the deployment's allocations (others are skipped): the sum
// of their shares, over the groups d has for the group figures, over all
// for HealthIndex, and over the zones a group has for their Healthy and
// InFlight (an alloc of a zone the group does not list counts in none).
func (d *Deployment) CountLiveFigures(allocs []*Allocation) {
	d.ClearLiveFigures()
	canary := d.PlacedCanaryIDs()
	for _, a := range allocs {
		if a == nil || a.DeploymentID != d.ID {
			continue
		}
		s := a.DeploymentShare(canary)
		if s.Healthy {
			d.HealthIndex = max(d.HealthIndex, s.HealthIndex)
		}
		st := d.TaskGroups[s.Group]
		if st == nil {
			continue
		}
		if s.Healthy {
			st.LiveHealthyAllocs++
		}
		if s.Canary {
			st.LiveHealthyCanaries++
		}
		if s.Unhealthy {
			st.MarkedUnhealthyAllocs++
			st.UnhealthyAllocIDs = append(st.UnhealthyAllocIDs, a.ID)
		}
		if s.Healthy || s.InFlight {
			if z := st.Zone(s.Zone); z != nil {
				if s.Healthy {
					z.Healthy++
				} else {
					z.InFlight++
				}
			}
		}
	}
	for _, st := range d.TaskGroups {
		if st != nil {
			slices.Sort(st.UnhealthyAllocIDs)
		}
	}
}

// SetUnhealthyID adds (in) or removes id from the sorted UnhealthyAllocIDs
// of s, a copy its caller owns; it reports whether the list changed.
func (s *DeploymentState) SetUnhealthyID(id string, in bool) bool {
	i, found := slices.BinarySearch(s.UnhealthyAllocIDs, id)
	switch {
	case in && !found:
		s.UnhealthyAllocIDs = slices.Insert(s.UnhealthyAllocIDs, i, id)
		return true
	case !in && found:
		s.UnhealthyAllocIDs = slices.Delete(s.UnhealthyAllocIDs, i, i+1)
		if len(s.UnhealthyAllocIDs) == 0 {
			s.UnhealthyAllocIDs = nil
		}
		return true
	}
	return false
}
