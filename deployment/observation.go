package deployment

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// Observation is everything Decide looks at: one consistent view of a
// deployment and what it depends on, plus the time of the decision.
type Observation struct {
	// Deployment is the deployment to decide on.
	Deployment *structs.Deployment
	// Job is the job version the deployment rolls out.
	Job *structs.Job
	// LatestJob is the job as currently registered: it may be newer than Job,
	// stopped, or nil when the job was purged.
	LatestJob *structs.Job
	// StableJob is the latest version marked stable, or nil.
	StableJob *structs.Job
	// Allocs are the deployment's allocations, with the deployment health
	// their clients (or an operator) reported; when FromFigures, only
	// those marked unhealthy (DeploymentState.UnhealthyAllocIDs).
	Allocs []*structs.Allocation
	// FromFigures says not every allocation was read: Decide takes each
	// group's healthy allocations and canaries, and the newest health,
	// from the live figures the store keeps in the deployment
	// (DeploymentState.LiveHealthyAllocs, LiveHealthyCanaries and
	// Deployment.HealthIndex), and decides the unhealthy allocations in
	// Allocs one by one.
	FromFigures bool
	// LatestEvalIndex is the newest state index a scheduling pass of the
	// job has read or will read: the highest CreateIndex among the job's
	// evaluations, or the SnapshotIndex a completed one was scheduled
	// against if higher (the maximum while one waits to be scheduled). A
	// healthy allocation whose health was recorded after it calls for a
	// new scheduling pass.
	LatestEvalIndex uint64
	// NotServing counts, per group, the job's allocations of any version
	// that serve nothing (structs.Allocation.NotServing), for max_unhealthy
	// (C.2). The watcher reads the job's allocations for it only when a
	// group of the job sets max_unhealthy; nil leaves the rule out.
	NotServing map[string]int
	// InFlight counts, per group, the deployment's live allocations whose
	// health is not known yet: an each_batch analysis run starts only
	// when none is (analysis.go). The watcher reads the allocations for
	// it only when a run may start; nil stands for none in flight.
	InFlight map[string]int
	// Now is the time of the decision, stamped by the leader.
	Now time.Time
}

// Decision is what the watcher should write for one deployment. The zero
// Decision changes nothing.
type Decision struct {
	// Status is the new deployment status; empty leaves it unchanged.
	Status string
	// StatusDescription is the new description; empty leaves it unchanged.
	StatusDescription string
	// Promote asks to promote the canaries of PromoteGroups.
	Promote       bool
	PromoteGroups []string
	// Fail is set when the deployment fails (Status is then failed).
	Fail bool
	// RevertTo is the stable job version to register again as a new
	// version, in the same write that fails the deployment.
	RevertTo *structs.Job
	// Stable asks to mark the deployment's job version stable; it is set
	// together with the successful status.
	Stable bool
	// MarkForReschedule lists unhealthy allocations the scheduler should
	// replace while the progress deadline runs.
	MarkForReschedule []string
	// CreateEval asks for a scheduling pass at once.
	CreateEval bool
	// WakeAt is the next time the deployment must be looked at again even
	// if nothing changes; zero if none.
	WakeAt time.Time

	// Rollout bookkeeping (part C), written with the status change into
	// the replicated deployment (structs.DeploymentStatusUpdate).

	// CheckpointsReached sets the named groups' CheckpointsReached: a
	// pause at a checkpoint (C.3).
	CheckpointsReached map[string]int
	// FailuresAtPause sets the named groups' FailuresAtPause: a pause on a
	// failure (C.2), so that a resume pauses again only on a newer one.
	FailuresAtPause map[string]int
	// ResumeAt, with Status paused, is when the pause ends by itself
	// (checkpoint_delay); zero: an operator must resume.
	ResumeAt time.Time
	// ZoneStates sets zones' State, per group and zone name (C.4): a zone
	// that starts rolling, is done, or reached its disruption budget.
	ZoneStates map[string]map[string]string
	// ZoneDoneAt sets zones' DoneAt, per group and zone name: when a zone
	// reached its success threshold.
	ZoneDoneAt map[string]map[string]time.Time
	// GroupStates sets groups' State (group_order): a group that starts
	// rolling, is done, or failed.
	GroupStates map[string]string
	// GroupDoneAt sets groups' DoneAt: when a group was done.
	GroupDoneAt map[string]time.Time

	// Analysis (analysis.go).

	// Analyses are the runs that start and the runs whose phase changes,
	// written in one entry (structs.DeploymentAnalysisRequest).
	Analyses []*structs.AnalysisRunUpdate
	// WaitReasons sets groups' WaitReason (wait_reason.go): only those
	// whose sentence changes, "" clearing it; written with Analyses when
	// the decision has any, else with the status.
	WaitReasons map[string]string
	// Measure lists the measurements due now. They are no write of the
	// decision: the leader takes each outside the pass and writes it.
	Measure []MeasureDue
}

// Changed reports whether the decision asks for any write.
func (d Decision) Changed() bool {
	return d.Status != "" || d.StatusDescription != "" || d.Promote || d.Fail ||
		d.RevertTo != nil || d.Stable || len(d.MarkForReschedule) > 0 || d.CreateEval ||
		len(d.CheckpointsReached) > 0 || len(d.FailuresAtPause) > 0 || d.changesZones() || d.changesGroups() ||
		len(d.Analyses) > 0 || len(d.WaitReasons) > 0
}

// changesGroups reports whether the decision moves an ordered group on.
func (d Decision) changesGroups() bool {
	return len(d.GroupStates) > 0 || len(d.GroupDoneAt) > 0
}

// changesZones reports whether the decision moves a zone on.
func (d Decision) changesZones() bool {
	return len(d.ZoneStates) > 0 || len(d.ZoneDoneAt) > 0
}

// writesStatus reports whether the decision calls for a status update
// (structs.DeploymentStatusUpdate): a new status or description, or
// rollout bookkeeping.
func (d Decision) writesStatus() bool {
	return d.Status != "" || d.StatusDescription != "" || len(d.CheckpointsReached) > 0 ||
		len(d.FailuresAtPause) > 0 || d.changesZones() || d.changesGroups() ||
		(len(d.WaitReasons) > 0 && len(d.Analyses) == 0)
}

// String renders the decision one field per line, in a fixed order, for
// logs and golden files. Times are printed in UTC.
func (d Decision) String() string {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%s: %s\n", k, v) }
	if d.Status != "" {
		line("status", d.Status)
	}
	if d.StatusDescription != "" {
		line("description", d.StatusDescription)
	}
	if d.Fail {
		line("fail", "true")
	}
	if d.RevertTo != nil {
		line("revert-to", fmt.Sprintf("version %d", d.RevertTo.Version))
	}
	if d.Promote {
		line("promote", strings.Join(d.PromoteGroups, ","))
	}
	if d.Stable {
		line("stable", "true")
	}
	if len(d.MarkForReschedule) > 0 {
		line("reschedule", strings.Join(d.MarkForReschedule, ","))
	}
	if len(d.CheckpointsReached) > 0 {
		line("checkpoints-reached", formatCounts(d.CheckpointsReached))
	}
	if len(d.FailuresAtPause) > 0 {
		line("failures-at-pause", formatCounts(d.FailuresAtPause))
	}
	if !d.ResumeAt.IsZero() {
		line("resume-at", d.ResumeAt.UTC().Format(time.RFC3339Nano))
	}
	if len(d.ZoneStates) > 0 {
		line("zone-states", formatZones(d.ZoneStates, func(s string) string { return s }))
	}
	if len(d.ZoneDoneAt) > 0 {
		line("zone-done-at", formatZones(d.ZoneDoneAt, func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }))
	}
	if len(d.GroupStates) > 0 {
		line("group-states", formatMap(d.GroupStates, func(s string) string { return s }))
	}
	if len(d.GroupDoneAt) > 0 {
		line("group-done-at", formatMap(d.GroupDoneAt, func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }))
	}
	if len(d.Analyses) > 0 {
		line("analysis-runs", formatRunUpdates(d.Analyses))
	}
	if len(d.WaitReasons) > 0 {
		line("wait-reasons", formatMap(d.WaitReasons, func(s string) string { return fmt.Sprintf("%q", s) }))
	}
	if len(d.Measure) > 0 {
		line("measure", formatMeasure(d.Measure))
	}
	if d.CreateEval {
		line("eval", "true")
	}
	if !d.Changed() {
		line("change", "none")
	}
	if !d.WakeAt.IsZero() {
		line("wake", d.WakeAt.UTC().Format(time.RFC3339Nano))
	}
	return b.String()
}

// formatCounts renders per-group counts as "api=1,web=2", by group name.
func formatCounts(m map[string]int) string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s=%d", name, m[name])
	}
	return strings.Join(parts, ",")
}

// formatZones renders per-group, per-zone values as "web/a=x,web/b=y", by
// group and zone name; the zone "" prints as "(none)".
func formatZones[V any](m map[string]map[string]V, f func(V) string) string {
	var parts []string
	for _, group := range sortedKeys(m) {
		for _, zone := range sortedKeys(m[group]) {
			name := zone
			if name == "" {
				name = "(none)"
			}
			parts = append(parts, fmt.Sprintf("%s/%s=%s", group, name, f(m[group][zone])))
		}
	}
	return strings.Join(parts, ",")
}

// formatMap renders per-group values as "api=x,web=y", by group name.
func formatMap[V any](m map[string]V, f func(V) string) string {
	var parts []string
	for _, group := range sortedKeys(m) {
		parts = append(parts, group+"="+f(m[group]))
	}
	return strings.Join(parts, ",")
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
