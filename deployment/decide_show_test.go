package deployment

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// How a scenario of TestDecide prints the deployment after a decision.

// show prints the deployment's status and bookkeeping, times relative to
// t0.
func (sc *scenario) show() string {
	d := sc.obs.Deployment
	countZones(d, sc.obs.Allocs)
	var b strings.Builder
	fmt.Fprintf(&b, "deployment: %s: %s\n", d.Status, d.StatusDescription)
	if !d.PausedAt.IsZero() {
		fmt.Fprintf(&b, "paused-at: +%s\n", d.PausedAt.Sub(t0))
	}
	if !d.ResumeAt.IsZero() {
		fmt.Fprintf(&b, "resume-at: +%s\n", d.ResumeAt.Sub(t0))
	}
	for _, name := range slices.Sorted(maps.Keys(d.TaskGroups)) {
		s := d.TaskGroups[name]
		fmt.Fprintf(&b, "group %s: failures=%d failures-at-pause=%d checkpoints-reached=%d", name,
			s.UnhealthyAllocs, s.FailuresAtPause, s.CheckpointsReached)
		if !s.RequireProgressBy.IsZero() {
			fmt.Fprintf(&b, " rpb=+%s", s.RequireProgressBy.Sub(t0))
		}
		if s.Order > 0 {
			fmt.Fprintf(&b, " order=%d state=%s", s.Order, s.State)
			if !s.DoneAt.IsZero() {
				fmt.Fprintf(&b, " done-at=+%s", s.DoneAt.Sub(t0))
			}
		}
		b.WriteString("\n")
		showRuns(&b, s)
		for _, z := range s.Zones {
			name := z.Name
			if name == "" {
				name = "(none)"
			}
			fmt.Fprintf(&b, "  zone %s: %s size=%d healthy=%d in-flight=%d failed=%d", name, z.State, z.Size, z.Healthy, z.InFlight, z.Failed)
			if !z.DoneAt.IsZero() {
				fmt.Fprintf(&b, " done-at=+%s", z.DoneAt.Sub(t0))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// countPlaced sets each group's PlacedAllocs as the store keeps it, so
// that PlacedAllocs − HealthyAllocs − UnhealthyAllocs (the first
// verdicts) is the number of the group's allocs with no verdict yet: those
// the watcher sees in flight.
func countPlaced(d *structs.Deployment, allocs []*structs.Allocation) {
	for name, s := range d.TaskGroups {
		pending := 0
		for _, a := range allocs {
			if a.TaskGroup == name && !a.TerminalStatus() && (a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil) {
				pending++
			}
		}
		s.PlacedAllocs = s.HealthyAllocs + s.UnhealthyAllocs + pending
	}
}

// analysisReasonsOnly keeps the wait reasons that set or replace an
// analysis run's sentence, for the scenario files that print no others.
func analysisReasonsOnly(d *structs.Deployment, reasons map[string]string) map[string]string {
	var out map[string]string
	for g, r := range reasons {
		old := ""
		if s := d.TaskGroups[g]; s != nil {
			old = s.WaitReason
		}
		if structs.IsAnalysisDescription(r) || structs.IsAnalysisDescription(old) {
			if out == nil {
				out = map[string]string{}
			}
			out[g] = r
		}
	}
	return out
}
