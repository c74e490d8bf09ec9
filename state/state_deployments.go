package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/droverhq/drover/structs"
)

// UpsertDeploymentTxn creates a deployment or updates its configuration.
// A new deployment gets CreateIndex and, when placedAt (UnixNano) is set,
// RequireProgressBy = placedAt + ProgressDeadline for each group with a
// deadline. For an existing deployment only the configuration is taken
// (desired counts, auto revert/promote, progress deadline, new groups);
// status and the counters derived from allocation updates (placed,
// canaries, healthy, unhealthy, promoted, require-progress-by) stay as
// stored, so that a plan made from an older snapshot cannot undo them.
// The live figures are never taken from dep: an active deployment that is
// new, or gains a group, has them counted from its allocations. A group's
// zones (names, sizes and states, in rollout order) are taken from dep
// when the group is created, their figures counted from the allocations
// (Failed from zero), and never taken again: figures, states and DoneAt
// are the store's and the status updates' from then on. Likewise a
// group's Order, State and DoneAt (group_order) are the plan's when the
// group is created and the status updates' from then on: a plan from an
// older snapshot cannot undo a group's start, its end or its failure.
func (s *Store) UpsertDeploymentTxn(t *WriteTxn, dep *structs.Deployment, placedAt int64) error {
	if dep == nil || dep.ID == "" || dep.JobID == "" {
		return fmt.Errorf("state: deployment without ID or job ID: %w", ErrInvalid)
	}
	existing, err := t.reader().DeploymentByID(dep.ID)
	if err != nil {
		return err
	}
	var c *structs.Deployment
	recount := false
	if existing == nil {
		recount = true
		c = dep.Copy()
		if c.Namespace == "" {
			c.Namespace = structs.DefaultNamespace
		}
		c.CreateIndex = t.index
		for _, g := range c.TaskGroups {
			if g != nil {
				g.Zones = initialZones(g.Zones)
			}
		}
		if c.CreateTime == 0 {
			c.CreateTime = placedAt
		}
		if placedAt != 0 {
			at := time.Unix(0, placedAt).UTC()
			for _, g := range c.TaskGroups {
				if g != nil && g.ProgressDeadline > 0 {
					g.RequireProgressBy = at.Add(g.ProgressDeadline)
				}
			}
		}
	} else {
		c = existing.Copy()
		if c.TaskGroups == nil {
			c.TaskGroups = map[string]*structs.DeploymentState{}
		}
		for name, g := range dep.TaskGroups {
			if g == nil {
				continue
			}
			cur, ok := c.TaskGroups[name]
			if !ok {
				ng := g.Copy()
				ng.LiveHealthyAllocs, ng.LiveHealthyCanaries, ng.MarkedUnhealthyAllocs = 0, 0, 0
				ng.UnhealthyAllocIDs = nil
				ng.Zones = initialZones(g.Zones)
				c.TaskGroups[name] = ng
				recount = true
				continue
			}
			cur.DesiredTotal = g.DesiredTotal
			cur.DesiredCanaries = g.DesiredCanaries
			cur.AutoRevert = g.AutoRevert
			cur.OnFailure = g.OnFailure
			cur.AutoPromote = g.AutoPromote
			cur.ProgressDeadline = g.ProgressDeadline
		}
	}
	switch {
	case existing == nil && !c.Active():
		// Live figures are the store's to derive, never the plan's.
		c.ClearLiveFigures()
	case recount && c.Active():
		// The deployment's allocations may exist already: written
		// before their deployment, or of a group new to it.
		if err := t.recountLive(c); err != nil {
			return err
		}
	}
	return s.putDeployment(t, c, placedAt)
}

// initialZones returns a group's zones as a plan creates them: name,
// size and state of each, in order, with no figures and no DoneAt. The
// result shares nothing with zones.
func initialZones(zones []*structs.ZoneState) []*structs.ZoneState {
	if len(zones) == 0 {
		return nil
	}
	out := make([]*structs.ZoneState, 0, len(zones))
	for _, z := range zones {
		if z != nil {
			out = append(out, &structs.ZoneState{Name: z.Name, Size: z.Size, State: z.State})
		}
	}
	return out
}

// putDeployment writes c (a copy owned by the caller).
func (s *Store) putDeployment(t *WriteTxn, c *structs.Deployment, at int64) error {
	return t.putDeployment(c, at)
}

// putDeployment writes c (a copy owned by the caller) at the
// transaction's index; at (UnixNano) sets ModifyTime unless 0.
func (t *WriteTxn) putDeployment(c *structs.Deployment, at int64) error {
	if err := t.markPromotedCanaries(c); err != nil {
		return err
	}
	c.ModifyIndex = t.index
	if at != 0 {
		c.ModifyTime = at
	}
	delete(t.canaries, c.ID)
	return t.insert(TableDeployments, c)
}

// UpdateDeploymentStatusTxn changes a deployment's status. With strict, an
// unknown or terminal deployment is an error; otherwise (plan results) it is
// skipped. Resuming (paused → running) restarts the progress deadline:
// RequireProgressBy = at + ProgressDeadline. The pause times come from at
// and the update alone (the state machine reads no clock): pausing a
// running deployment sets PausedAt = at and ResumeAt from the update; an
// update that leaves it paused sets ResumeAt from the update (zero holds
// it until an operator resumes it); any other status clears both. The
// update's CheckpointsReached and FailuresAtPause set those of the groups
// they name (unknown groups are ignored); its zone maps set the State and
// DoneAt of the zones they name, and ZoneFailedReset clears their Failed
// (unknown groups and zones are ignored); GroupStates and GroupDoneAt set
// the State and DoneAt of the groups they name, and a group that starts
// rolling (from waiting) restarts its progress deadline from at (unknown
// groups are ignored). AllPlaced sets the groups' AllPlaced and
// WaitReasons their WaitReason; an update
// without a Status changes nothing else.
func (s *Store) UpdateDeploymentStatusTxn(t *WriteTxn, u *structs.DeploymentStatusUpdate, at int64, strict bool) error {
	if u == nil {
		return fmt.Errorf("state: no deployment update: %w", ErrInvalid)
	}
	d, err := t.reader().DeploymentByID(u.DeploymentID)
	if err != nil {
		return err
	}
	switch {
	case d == nil && strict:
		return fmt.Errorf("state: deployment %q: %w", u.DeploymentID, ErrNotFound)
	case d != nil && !d.Active() && strict:
		return fmt.Errorf("state: deployment %q is %s: %w", u.DeploymentID, d.Status, ErrDeploymentTerminal)
	case d == nil || !d.Active():
		return nil
	}
	c := d.Copy()
	for name, v := range u.AllPlaced {
		if g := c.TaskGroups[name]; g != nil {
			g.AllPlaced = v
		}
	}
	for name, r := range u.WaitReasons {
		if g := c.TaskGroups[name]; g != nil {
			g.WaitReason = r
		}
	}
	if u.Status == "" {
		// The scheduler's bookkeeping alone (AllPlaced): the status, and
		// whatever an operator or the watcher set meanwhile, stay.
		return s.putDeployment(t, c, at)
	}
	wasPaused := d.Status == structs.DeploymentStatusPaused
	if d.Status == structs.DeploymentStatusPending && u.Status == structs.DeploymentStatusRunning {
		// A multi-region deployment whose region's turn came: its
		// progress deadlines run from now.
		restartProgress(c, time.Unix(0, at).UTC(), nil)
	}
	if wasPaused && u.Status == structs.DeploymentStatusRunning {
		restartProgress(c, time.Unix(0, at).UTC(), nil)
		// A resume accepts the failures counted so far, those of the
		// pause included: only a newer one pauses again (max_failed).
		for _, g := range c.TaskGroups {
			if g != nil {
				g.FailuresAtPause = max(g.FailuresAtPause, g.UnhealthyAllocs)
			}
		}
	}
	switch {
	case u.Status == structs.DeploymentStatusPaused && !wasPaused:
		c.PausedAt = time.Time{}
		if at != 0 {
			c.PausedAt = time.Unix(0, at).UTC()
		}
		c.ResumeAt = utc(u.ResumeAt)
	case u.Status == structs.DeploymentStatusPaused:
		c.ResumeAt = utc(u.ResumeAt)
	default:
		c.PausedAt, c.ResumeAt = time.Time{}, time.Time{}
	}
	for name, n := range u.CheckpointsReached {
		if g := c.TaskGroups[name]; g != nil {
			g.CheckpointsReached = n
		}
	}
	for name, n := range u.FailuresAtPause {
		if g := c.TaskGroups[name]; g != nil {
			g.FailuresAtPause = n
		}
	}
	applyZoneUpdates(c, u, at)
	applyGroupUpdates(c, u, at)
	c.Status = u.Status
	c.StatusDescription = u.StatusDescription
	return s.putDeployment(t, c, at)
}

// applyZoneUpdates applies u's zone transitions to c (a copy the caller
// owns): states, the times zones reached their success threshold, and the
// failure counts an operator's resume clears. A zone that starts rolling
// (from waiting) restarts its group's progress deadline from at (UnixNano)
// when that is later: the pause between zones was no lack of progress.
func applyZoneUpdates(c *structs.Deployment, u *structs.DeploymentStatusUpdate, at int64) {
	for name, zones := range u.ZoneStates {
		g := c.TaskGroups[name]
		for zone, state := range zones {
			z := g.Zone(zone)
			if z == nil {
				continue
			}
			if z.State == structs.ZoneStateWaiting && state == structs.ZoneStateRolling && g.ProgressDeadline > 0 && at != 0 {
				if by := time.Unix(0, at).UTC().Add(g.ProgressDeadline); by.After(g.RequireProgressBy) {
					g.RequireProgressBy = by
				}
			}
			z.State = state
		}
	}
	for name, zones := range u.ZoneDoneAt {
		g := c.TaskGroups[name]
		for zone, at := range zones {
			if z := g.Zone(zone); z != nil {
				z.DoneAt = utc(at)
			}
		}
	}
	for name, zones := range u.ZoneFailedReset {
		g := c.TaskGroups[name]
		for _, zone := range zones {
			if z := g.Zone(zone); z != nil {
				z.Failed = 0
			}
		}
	}
}

// applyGroupUpdates applies u's group transitions (group_order) to c (a
// copy the caller owns): states and the times groups were done. A group
// that starts rolling (from waiting) restarts its progress deadline from
// at (UnixNano) when that is later: its wait for the earlier groups was
// no lack of progress.
func applyGroupUpdates(c *structs.Deployment, u *structs.DeploymentStatusUpdate, at int64) {
	for name, state := range u.GroupStates {
		g := c.TaskGroups[name]
		if g == nil {
			continue
		}
		if g.State == structs.GroupStateWaiting && state == structs.GroupStateRolling && g.ProgressDeadline > 0 && at != 0 {
			if by := time.Unix(0, at).UTC().Add(g.ProgressDeadline); by.After(g.RequireProgressBy) {
				g.RequireProgressBy = by
			}
		}
		g.State = state
	}
	for name, doneAt := range u.GroupDoneAt {
		if g := c.TaskGroups[name]; g != nil {
			g.DoneAt = utc(doneAt)
		}
	}
}

// utc returns t in UTC, and the zero time as it is.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// restartProgress sets RequireProgressBy = at + ProgressDeadline for the
// groups (all when nil) that have a deadline.
func restartProgress(d *structs.Deployment, at time.Time, groups map[string]bool) {
	for name, g := range d.TaskGroups {
		if g.ProgressDeadline > 0 && (groups == nil || groups[name]) {
			g.RequireProgressBy = at.Add(g.ProgressDeadline)
		}
	}
}

// UpdateDeploymentStatus applies an operator or watcher status change; see
// UpdateDeploymentStatusReqTxn.
func (s *Store) UpdateDeploymentStatus(index uint64, req *structs.DeploymentStatusUpdateRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpdateDeploymentStatusReqTxn(t, req) })
}

// UpdateDeploymentStatusReqTxn changes the deployment's status (refused on
// an unknown or terminal deployment), registers the reverted job if any and
// stores the eval, all in t. A watcher's request decided on a status the
// deployment no longer has (DecidedOn) changes nothing.
func (s *Store) UpdateDeploymentStatusReqTxn(t *WriteTxn, req *structs.DeploymentStatusUpdateRequest) error {
	if u := req.DeploymentUpdate; u != nil && u.DecidedOn != nil {
		d, err := t.reader().DeploymentByID(u.DeploymentID)
		if err != nil {
			return err
		}
		if d != nil && d.Active() && !u.DecidedOn.Holds(d) {
			return nil
		}
	}
	if err := s.UpdateDeploymentStatusTxn(t, req.DeploymentUpdate, req.UpdatedAt, true); err != nil {
		return err
	}
	return s.revertAndEval(t, req.Job, req.Eval, req.UpdatedAt)
}

func (s *Store) revertAndEval(t *WriteTxn, job *structs.Job, eval *structs.Evaluation, at int64) error {
	if job != nil {
		res, err := s.UpsertJobTxn(t, job, at)
		if err != nil {
			return err
		}
		if eval != nil {
			eval = eval.Copy()
			eval.JobModifyIndex = res.JobModifyIndex
		}
	}
	if eval != nil {
		return s.upsertEval(t, eval)
	}
	return nil
}

// PromoteDeployment promotes canaries; see PromoteDeploymentTxn.
func (s *Store) PromoteDeployment(index uint64, req *structs.DeploymentPromoteRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.PromoteDeploymentTxn(t, req) })
}

// PromoteDeploymentTxn promotes the canary groups of the deployment (all,
// or the named ones). Each must have at least DesiredCanaries healthy
// canaries, else ErrPromotion naming the group and "x/N healthy". Promoted
// groups get RequireProgressBy = PromotedAt + ProgressDeadline. The
// allocations keep their canary flag (unlike Nomad, which clears it): a
// promoted canary takes over its index, and the scheduler needs to know
// which alloc at that index is the canary. A "requires promotion"
// description becomes "Deployment is running". A paused deployment is
// refused (ErrPromotion), and a watcher's promotion decided on a status
// the deployment no longer has (DecidedOn) changes nothing.
func (s *Store) PromoteDeploymentTxn(t *WriteTxn, req *structs.DeploymentPromoteRequest) error {
	r := t.reader()
	d, err := r.DeploymentByID(req.DeploymentID)
	if err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("state: deployment %q: %w", req.DeploymentID, ErrNotFound)
	}
	if !d.Active() {
		return fmt.Errorf("state: deployment %q is %s: %w", d.ID, d.Status, ErrDeploymentTerminal)
	}
	if req.DecidedOn != nil && !req.DecidedOn.Holds(d) {
		return nil
	}
	if d.Status == structs.DeploymentStatusPaused {
		return fmt.Errorf("state: deployment %q is paused: %w", d.ID, ErrPromotion)
	}
	groups := map[string]bool{}
	if req.All {
		for name, g := range d.TaskGroups {
			// A group waiting its turn (group_order) has no canaries yet.
			if g.DesiredCanaries > 0 && !(g.Order > 0 && g.State == structs.GroupStateWaiting) {
				groups[name] = true
			}
		}
	}
	for _, name := range req.Groups {
		g, ok := d.TaskGroups[name]
		if !ok {
			return fmt.Errorf("state: deployment %q has no group %q: %w", d.ID, name, ErrPromotion)
		}
		if g.DesiredCanaries == 0 {
			return fmt.Errorf("state: group %q has no canaries to promote: %w", name, ErrPromotion)
		}
		groups[name] = true
	}
	if len(groups) == 0 {
		return fmt.Errorf("state: deployment %q has no canaries to promote: %w", d.ID, ErrPromotion)
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	slices.Sort(names)
	c := d.Copy()
	for _, name := range names {
		g := c.TaskGroups[name]
		healthy := 0
		for _, id := range g.PlacedCanaries {
			a, err := r.AllocByID(id)
			if err != nil {
				return err
			}
			if a != nil && a.IsHealthy() {
				healthy++
			}
		}
		if healthy < g.DesiredCanaries {
			return fmt.Errorf("state: task group %q has %d/%d healthy allocations: %w",
				name, healthy, g.DesiredCanaries, ErrPromotion)
		}
		g.Promoted = true
	}
	restartProgress(c, req.PromotedAt, groups)
	if c.StatusDescription == structs.DeploymentStatusDescriptionRunningNeedsPromotion ||
		c.StatusDescription == structs.DeploymentStatusDescriptionRunningAutoPromotion {
		c.StatusDescription = structs.DeploymentStatusDescriptionRunning
	}
	if err := s.putDeployment(t, c, req.PromotedAt.UnixNano()); err != nil {
		return err
	}
	if req.Eval != nil {
		return s.upsertEval(t, req.Eval)
	}
	return nil
}

// SetAllocHealth sets allocations' health by hand; see SetAllocHealthTxn.
func (s *Store) SetAllocHealth(index uint64, req *structs.DeploymentAllocHealthRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.SetAllocHealthTxn(t, req) })
}

// SetAllocHealthTxn marks the allocations healthy or unhealthy at
// req.Timestamp; each must belong to the (active) deployment. Counters move
// as for client health reports. An optional status update, reverted job
// and eval are applied in the same transaction.
func (s *Store) SetAllocHealthTxn(t *WriteTxn, req *structs.DeploymentAllocHealthRequest) error {
	r := t.reader()
	d, err := r.DeploymentByID(req.DeploymentID)
	if err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("state: deployment %q: %w", req.DeploymentID, ErrNotFound)
	}
	if !d.Active() {
		return fmt.Errorf("state: deployment %q is %s: %w", d.ID, d.Status, ErrDeploymentTerminal)
	}
	deltas := newDeploymentDeltas()
	at := req.Timestamp.UnixNano()
	mark := func(ids []string, healthy bool) error {
		for _, id := range ids {
			a, err := r.AllocByID(id)
			if err != nil {
				return err
			}
			if a == nil || a.DeploymentID != d.ID {
				return fmt.Errorf("state: alloc %q is not part of deployment %q: %w", id, d.ID, ErrInvalid)
			}
			c := rewrite(a)
			setHealth(t, deltas, c, healthy, req.Timestamp)
			c.ModifyIndex = t.index
			c.ModifyTime = at
			if err := t.putAlloc(a, c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := mark(req.HealthyAllocationIDs, true); err != nil {
		return err
	}
	if err := mark(req.UnhealthyAllocationIDs, false); err != nil {
		return err
	}
	if err := s.flushDeploymentDeltas(t, deltas, at); err != nil {
		return err
	}
	if req.DeploymentUpdate != nil {
		if err := s.UpdateDeploymentStatusTxn(t, req.DeploymentUpdate, at, true); err != nil {
			return err
		}
	}
	return s.revertAndEval(t, req.Job, req.Eval, at)
}

// DeploymentByID returns the deployment, or nil.
func (s *Snapshot) DeploymentByID(id string) (*structs.Deployment, error) {
	return getOne[*structs.Deployment](s, TableDeployments, "id", id)
}

// Deployments returns every deployment, by ID.
func (s *Snapshot) Deployments() ([]*structs.Deployment, error) {
	return list[*structs.Deployment](s, TableDeployments, "id")
}

// DeploymentsByJob returns the job's deployments (all versions).
func (s *Snapshot) DeploymentsByJob(namespace, jobID string) ([]*structs.Deployment, error) {
	return list[*structs.Deployment](s, TableDeployments, "job", namespace, jobID)
}

// LatestDeploymentByJob returns the job's deployment with the highest
// CreateIndex, or nil.
func (s *Snapshot) LatestDeploymentByJob(namespace, jobID string) (*structs.Deployment, error) {
	deps, err := s.DeploymentsByJob(namespace, jobID)
	if err != nil {
		return nil, err
	}
	var latest *structs.Deployment
	for _, d := range deps {
		if latest == nil || d.CreateIndex > latest.CreateIndex {
			latest = d
		}
	}
	return latest, nil
}

// DeploymentsByIDPrefix returns the deployments whose ID starts with
// prefix.
func (s *Snapshot) DeploymentsByIDPrefix(prefix string) ([]*structs.Deployment, error) {
	return list[*structs.Deployment](s, TableDeployments, "id_prefix", prefix)
}
