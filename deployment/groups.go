package deployment

import (
	"sort"
	"time"

	"github.com/droverhq/drover/structs"
)

// groupView is one task group of a deployment as seen through its allocs.
type groupView struct {
	name  string
	state *structs.DeploymentState
	// healthy counts live allocations (not terminal) reported healthy.
	healthy int
	// healthyCanaries counts the live healthy ones placed as canaries.
	healthyCanaries int
}

// done reports whether the group reached its goal: promoted if it has
// canaries, and at least DesiredTotal healthy allocations.
func (g *groupView) done() bool {
	if g.state.DesiredCanaries > 0 && !g.state.Promoted {
		return false
	}
	return g.healthy >= g.state.DesiredTotal
}

// awaitingPromotion reports whether the group has unpromoted canaries.
func (g *groupView) awaitingPromotion() bool {
	return g.state.DesiredCanaries > 0 && !g.state.Promoted
}

// canariesHealthy reports whether every desired canary is healthy.
func (g *groupView) canariesHealthy() bool {
	return g.healthyCanaries >= g.state.DesiredCanaries
}

// pastDeadline reports whether the group's progress deadline is reached at
// now. A deadline is reached at the instant it names, so that a timer
// armed for WakeAt finds it reached.
func (g *groupView) pastDeadline(now time.Time) bool {
	s := g.state
	return s.ProgressDeadline > 0 && !s.RequireProgressBy.IsZero() && !now.Before(s.RequireProgressBy)
}

// failsDeadline reports whether the group fails on its progress deadline:
// the deadline is reached and the group is neither done nor holding
// healthy canaries for promotion.
func (g *groupView) failsDeadline(now time.Time) bool {
	if !g.pastDeadline(now) || g.done() {
		return false
	}
	return !(g.awaitingPromotion() && g.canariesHealthy())
}

// viewGroups builds a view of every group of the deployment, sorted by
// name so that decisions come out in a stable order.
func viewGroups(d *structs.Deployment, allocs []*structs.Allocation) []*groupView {
	byName := make(map[string]*groupView, len(d.TaskGroups))
	canary := make(map[string]bool)
	for name, s := range d.TaskGroups {
		if s == nil {
			continue
		}
		byName[name] = &groupView{name: name, state: s}
		for _, id := range s.PlacedCanaries {
			canary[id] = true
		}
	}
	for _, a := range allocs {
		if a == nil {
			continue
		}
		g := byName[a.TaskGroup]
		if g == nil || a.TerminalStatus() || !a.IsHealthy() {
			continue
		}
		g.healthy++
		if canary[a.ID] || a.IsCanary() {
			g.healthyCanaries++
		}
	}
	out := make([]*groupView, 0, len(byName))
	for _, g := range byName {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
