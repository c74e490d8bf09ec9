package deployment

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// Promote validates promoting the canaries of the named groups (all canary
// groups when groups is empty) and returns the promoted deployment: each
// promoted group is marked Promoted with require_progress_by = now +
// progress_deadline, and the description leaves the promotion wording.
// Every group to promote must have all its desired canaries healthy among
// allocs; otherwise the error wraps ErrCanariesUnhealthy and names each
// lagging group with "x/N healthy".
func Promote(d *structs.Deployment, groups []string, allocs []*structs.Allocation, now time.Time) (*structs.Deployment, error) {
	if d == nil {
		return nil, ErrNoDeployment
	}
	if !d.Active() {
		return nil, ErrPromoteTerminal
	}
	if d.Status == structs.DeploymentStatusPaused {
		return nil, ErrPromotePaused
	}
	if err := regionWaits(d); err != nil {
		return nil, err
	}
	if !d.RequiresPromotion() {
		return nil, ErrNoCanaries
	}
	for _, name := range groups {
		if d.TaskGroups[name] == nil {
			return nil, fmt.Errorf("%w: %q", ErrUnknownGroup, name)
		}
	}
	views := viewGroups(Observation{Deployment: d, Allocs: allocs})
	var lagging []string
	var chosen []*groupView
	for _, g := range views {
		if len(groups) > 0 && !slices.Contains(groups, g.name) {
			continue
		}
		if !g.awaitingPromotion() {
			continue
		}
		if !g.canariesHealthy() {
			lagging = append(lagging, fmt.Sprintf("task group %q has %d/%d healthy allocations",
				g.name, g.healthyCanaries, g.state.DesiredCanaries))
			continue
		}
		chosen = append(chosen, g)
	}
	if len(lagging) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrCanariesUnhealthy, strings.Join(lagging, "; "))
	}
	if len(chosen) == 0 {
		return nil, ErrNoCanaries
	}
	out := d.Copy()
	for _, g := range chosen {
		s := out.TaskGroups[g.name]
		s.Promoted = true
		if s.ProgressDeadline > 0 {
			s.RequireProgressBy = now.Add(s.ProgressDeadline)
		}
	}
	out.StatusDescription = runningDescription(out)
	out.ModifyTime = now.UnixNano()
	return out, nil
}

// Pause validates pausing (pause = true) or resuming (false) the deployment
// and returns the changed deployment. Pausing a running deployment records
// PausedAt = now; pausing a paused one holds it: a checkpoint delay
// (ResumeAt) no longer resumes it, and the description says it is paused.
// Resuming continues after any pause — an operator's, a checkpoint's or a
// failure's (FailuresAtPause and CheckpointsReached are kept, so only a
// newer failure or the next checkpoint pauses it again) — and restarts
// every group's progress deadline from now, so time spent paused never
// counts against it. A zone whose disruption budget was reached turns
// "rolling" again with its failures cleared (ResumedZones: the operator
// accepted them); max_failed's count is kept. A group of a job that rolls
// its groups in order that failed turns "done" again if it had been done,
// else "rolling" (ResumedGroups): the next pass checks again that the
// groups before a waiting one serve fully.
func Pause(d *structs.Deployment, pause bool, now time.Time) (*structs.Deployment, error) {
	if d == nil {
		return nil, ErrNoDeployment
	}
	if !d.Active() {
		if pause {
			return nil, ErrPauseTerminal
		}
		return nil, ErrResumeTerminal
	}
	if err := regionWaits(d); err != nil {
		return nil, err
	}
	out := d.Copy()
	out.ModifyTime = now.UnixNano()
	if pause {
		if d.Status != structs.DeploymentStatusPaused {
			out.PausedAt = now
		}
		out.Status = structs.DeploymentStatusPaused
		out.StatusDescription = structs.DeploymentStatusDescriptionPaused
		out.ResumeAt = time.Time{}
		return out, nil
	}
	if d.Status == structs.DeploymentStatusRunning {
		return out, nil
	}
	states, reset := ResumedZones(d)
	for name, zones := range states {
		for _, z := range out.TaskGroups[name].Zones {
			if st, ok := zones[z.Name]; ok {
				z.State = st
			}
		}
	}
	for name, zones := range reset {
		for _, zone := range zones {
			if z := out.TaskGroups[name].Zone(zone); z != nil {
				z.Failed = 0
			}
		}
	}
	for name, st := range ResumedGroups(d) {
		out.TaskGroups[name].State = st
	}
	out.Status = structs.DeploymentStatusRunning
	out.PausedAt, out.ResumeAt = time.Time{}, time.Time{}
	for _, s := range out.TaskGroups {
		if s != nil && s.ProgressDeadline > 0 {
			s.RequireProgressBy = now.Add(s.ProgressDeadline)
		}
		if s != nil {
			// The resume accepts the failures counted so far, as the
			// store does when it applies it.
			s.FailuresAtPause = max(s.FailuresAtPause, s.UnhealthyAllocs)
		}
	}
	out.StatusDescription = runningDescription(out)
	return out, nil
}

// Fail validates failing the deployment by hand and returns the failed
// deployment and, when a group reverts on failure (on_failure = "revert"
// or auto_revert), the stable job to register again, marked RevertOf (nil
// when there is none or it has job's specification). job is the version
// the deployment rolls out. A paused deployment fails too: that is how an
// operator ends one paused on a failure or at a checkpoint.
func Fail(d *structs.Deployment, job, stable *structs.Job, now time.Time) (*structs.Deployment, *structs.Job, error) {
	if d == nil {
		return nil, nil, ErrNoDeployment
	}
	if !d.Active() {
		return nil, nil, ErrFailTerminal
	}
	out := d.Copy()
	out.Status = structs.DeploymentStatusFailed
	out.StatusDescription = structs.DeploymentStatusDescriptionFailedByUser
	out.ModifyTime = now.UnixNano()
	out.PausedAt, out.ResumeAt = time.Time{}, time.Time{}
	var revert *structs.Job
	names := make([]string, 0, len(d.TaskGroups))
	for name := range d.TaskGroups {
		names = append(names, name)
	}
	if autoRevert(d, job, names) {
		out.StatusDescription, revert = revertTarget(out.StatusDescription, job, stable)
	}
	return out, revert, nil
}

// SetAllocHealth validates setting the deployment health of allocations by
// hand and returns copies of the changed allocations, stamped with now.
// Any health check mode is accepted; the next Decide acts on the result.
func SetAllocHealth(d *structs.Deployment, healthy, unhealthy []string, allocs []*structs.Allocation, now time.Time) ([]*structs.Allocation, error) {
	if d == nil {
		return nil, ErrNoDeployment
	}
	if !d.Active() {
		return nil, ErrHealthTerminal
	}
	if len(healthy) == 0 && len(unhealthy) == 0 {
		return nil, ErrNoAllocs
	}
	byID := make(map[string]*structs.Allocation, len(allocs))
	for _, a := range allocs {
		if a != nil && a.DeploymentID == d.ID {
			byID[a.ID] = a
		}
	}
	want := make(map[string]bool, len(healthy)+len(unhealthy))
	var errs []error
	for _, set := range []struct {
		ids []string
		ok  bool
	}{{healthy, true}, {unhealthy, false}} {
		for _, id := range set.ids {
			if prev, seen := want[id]; seen && prev != set.ok {
				errs = append(errs, fmt.Errorf("%w: %q", ErrHealthConflict, id))
				continue
			}
			if byID[id] == nil {
				errs = append(errs, fmt.Errorf("%w: %q", ErrUnknownAlloc, id))
				continue
			}
			want[id] = set.ok
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]*structs.Allocation, 0, len(ids))
	for _, id := range ids {
		a := byID[id].Copy()
		ok := want[id]
		ds := a.DeploymentStatus
		if ds == nil {
			ds = &structs.AllocDeploymentStatus{}
		}
		ds.Healthy = &ok
		ds.Timestamp = now
		a.DeploymentStatus = ds
		a.ModifyTime = now.UnixNano()
		out = append(out, a)
	}
	return out, nil
}
