package scheduler

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// Plan is the reconciler's answer: plain data the plan applier commits.
type Plan struct {
	EvalID string
	JobID  string
	// Place lists new allocations to create, in order.
	Place []Placement
	// Stop lists allocations to stop outright (scale down, lost, job stop).
	Stop []StopAlloc
	// InPlace lists allocations updated to the new job version on their
	// node: copies with Job, EvalID and DeploymentID set.
	InPlace []*structs.Allocation
	// Deployment is the deployment to create, or an updated copy of the
	// current one; nil when neither is needed.
	Deployment *structs.Deployment
	// DeploymentUpdates changes the status of existing deployments.
	DeploymentUpdates []DeploymentStatusUpdate
	// FollowupEvals are delayed evaluations for reschedules not yet due.
	FollowupEvals []*structs.Evaluation
	// FollowupAllocs links failed allocations to the follow-up evaluation
	// that will replace them, so later passes do not create another.
	FollowupAllocs []FollowupLink
	// DesiredTGUpdates counts the changes per group, as `job plan` shows.
	DesiredTGUpdates map[string]*DesiredUpdates
}

// Placement asks for one new allocation of a group.
type Placement struct {
	// AllocID is minted by the reconciler from Input.IDs.
	AllocID   string
	Name      string
	Index     int
	TaskGroup string
	// Canary marks an allocation placed beside the old ones until promotion.
	Canary bool
	// PreviousAlloc is the allocation this one continues (reschedule,
	// replacement of a lost or migrating alloc, destructive update).
	PreviousAlloc string
	// PreviousNode is where PreviousAlloc ran; placement avoids it when
	// rescheduling.
	PreviousNode string
	// Replaces is an allocation to stop in the same plan, with
	// ReplaceDescription; the applier keeps it running if this placement
	// fails.
	Replaces           string
	ReplaceDescription string
	// Zone, when InZone, is the zone the replacement must land in: that of
	// the alloc it replaces (a group rolled by zones).
	Zone   string
	InZone bool
	// Surge marks a replacement started before the alloc it replaces
	// (PreviousAlloc) stops: that alloc stops once this one is healthy.
	Surge bool
	// Migrate marks the replacement of an alloc moving off a draining
	// node (migrate.go): without Replaces, the old alloc serves until this
	// one is healthy. It is not pinned to a zone.
	Migrate bool
	// replaced is the alloc Replaces names, when the reconciler had it at
	// hand: a lazy placer releases it without looking it up.
	replaced *structs.Allocation
	// NodeID pins the placement to a node (system jobs).
	NodeID string
	// DeploymentID is the deployment the new allocation belongs to.
	DeploymentID string
	// Reschedule marks a replacement for a failed allocation; the new
	// alloc carries RescheduleTracker.
	Reschedule        bool
	RescheduleTracker *structs.RescheduleTracker
}

// StopAlloc asks for one allocation to stop.
type StopAlloc struct {
	Alloc       *structs.Allocation
	Description string
	// ClientStatus, when set, overrides the client status (e.g. "lost").
	ClientStatus string
}

// DeploymentStatusUpdate changes an existing deployment's status.
type DeploymentStatusUpdate struct {
	DeploymentID      string
	Status            string
	StatusDescription string
	// AllPlaced sets groups' DeploymentState.AllPlaced; the status and
	// description are then the deployment's own, unchanged.
	AllPlaced map[string]bool
}

// FollowupLink records that AllocID will be rescheduled by EvalID.
type FollowupLink struct {
	AllocID string
	EvalID  string
}

// DesiredUpdates counts one group's changes, as Nomad's DesiredUpdates.
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
}

func (d *DesiredUpdates) String() string {
	return fmt.Sprintf("ignore=%d place=%d migrate=%d stop=%d inplace=%d destructive=%d canary=%d",
		d.Ignore, d.Place, d.Migrate, d.Stop, d.InPlaceUpdate, d.DestructiveUpdate, d.Canary)
}

// desired returns the group's counters, creating them.
func (p *Plan) desired(group string) *DesiredUpdates {
	if p.DesiredTGUpdates == nil {
		p.DesiredTGUpdates = map[string]*DesiredUpdates{}
	}
	d := p.DesiredTGUpdates[group]
	if d == nil {
		d = &DesiredUpdates{}
		p.DesiredTGUpdates[group] = d
	}
	return d
}

// IsNoOp reports whether the plan changes nothing.
func (p *Plan) IsNoOp() bool {
	return len(p.Place) == 0 && len(p.Stop) == 0 && len(p.InPlace) == 0 &&
		p.Deployment == nil && len(p.DeploymentUpdates) == 0 && len(p.FollowupEvals) == 0
}

// String renders the plan in a stable form for golden files.
func (p *Plan) String() string {
	var b strings.Builder
	if d := p.Deployment; d != nil {
		fmt.Fprintf(&b, "deployment %s job-version=%d status=%s %q\n", d.ID, d.JobVersion, d.Status, d.StatusDescription)
		for _, g := range sortedKeys(d.TaskGroups) {
			s := d.TaskGroups[g]
			fmt.Fprintf(&b, "  group %s: desired-total=%d desired-canaries=%d promoted=%t auto-revert=%t auto-promote=%t progress-deadline=%s",
				g, s.DesiredTotal, s.DesiredCanaries, s.Promoted, s.AutoRevert, s.AutoPromote, s.ProgressDeadline)
			if s.OnFailure != "" && s.OnFailure != structs.OnFailureFail {
				fmt.Fprintf(&b, " on-failure=%s", s.OnFailure)
			}
			if s.CheckpointsReached > 0 {
				fmt.Fprintf(&b, " checkpoints-reached=%d", s.CheckpointsReached)
			}
			if s.Order > 0 {
				fmt.Fprintf(&b, " order=%d state=%s", s.Order, s.State)
			}
			if s.AllPlaced {
				b.WriteString(" all-placed")
			}
			b.WriteByte('\n')
			if len(s.Zones) > 0 {
				b.WriteString("    zones:")
				for _, z := range s.Zones {
					fmt.Fprintf(&b, " %q=%s/%d", z.Name, z.State, z.Size)
				}
				b.WriteByte('\n')
			}
		}
	}
	for _, u := range p.DeploymentUpdates {
		if u.Status == "" {
			fmt.Fprintf(&b, "deployment-update %s all-placed=%s\n", u.DeploymentID, boolMap(u.AllPlaced))
			continue
		}
		fmt.Fprintf(&b, "deployment-update %s status=%s %q\n", u.DeploymentID, u.Status, u.StatusDescription)
	}
	for _, pl := range p.Place {
		fmt.Fprintf(&b, "place %s id=%s", pl.Name, pl.AllocID)
		if pl.Canary {
			b.WriteString(" canary")
		}
		if pl.NodeID != "" {
			fmt.Fprintf(&b, " node=%s", pl.NodeID)
		}
		if pl.PreviousAlloc != "" {
			fmt.Fprintf(&b, " previous=%s", pl.PreviousAlloc)
		}
		if pl.Replaces != "" {
			fmt.Fprintf(&b, " replaces=%s (%s)", pl.Replaces, pl.ReplaceDescription)
		}
		if pl.Surge {
			b.WriteString(" surge")
		}
		if pl.Migrate {
			b.WriteString(" migrate")
		}
		if pl.InZone {
			fmt.Fprintf(&b, " zone=%q", pl.Zone)
		}
		if pl.Reschedule && pl.RescheduleTracker != nil {
			fmt.Fprintf(&b, " reschedule-attempt=%d", len(pl.RescheduleTracker.Events))
		}
		if pl.DeploymentID != "" {
			fmt.Fprintf(&b, " deployment=%s", pl.DeploymentID)
		}
		b.WriteByte('\n')
	}
	for _, s := range p.Stop {
		fmt.Fprintf(&b, "stop %s id=%s %q", s.Alloc.Name, s.Alloc.ID, s.Description)
		if s.ClientStatus != "" {
			fmt.Fprintf(&b, " client-status=%s", s.ClientStatus)
		}
		b.WriteByte('\n')
	}
	for _, a := range p.InPlace {
		fmt.Fprintf(&b, "inplace %s id=%s job-version=%d", a.Name, a.ID, a.JobVersion())
		if a.DeploymentID != "" {
			fmt.Fprintf(&b, " deployment=%s", a.DeploymentID)
		}
		if a.DesiredRestart != nil {
			b.WriteString(" restart")
		}
		b.WriteByte('\n')
	}
	for _, e := range p.FollowupEvals {
		fmt.Fprintf(&b, "followup-eval %s wait-until=%s triggered-by=%s\n", e.ID, e.WaitUntil.UTC().Format(time.RFC3339), e.TriggeredBy)
	}
	for _, l := range p.FollowupAllocs {
		fmt.Fprintf(&b, "followup-alloc %s eval=%s\n", l.AllocID, l.EvalID)
	}
	for _, g := range sortedKeys(p.DesiredTGUpdates) {
		fmt.Fprintf(&b, "desired %s: %s\n", g, p.DesiredTGUpdates[g])
	}
	if b.Len() == 0 {
		return "no-op\n"
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// boolMap prints m as "a:true,b:false", sorted by key.
func boolMap(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%t", k, m[k])
	}
	return strings.Join(parts, ",")
}
