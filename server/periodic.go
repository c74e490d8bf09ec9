package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The periodic dispatcher launches the children of periodic jobs, as
// Nomad's: at each time of a job's cron specs, a copy of the job (ID
// "<job>/periodic-<unix time>", ParentID the job, no periodic block) is
// registered with its evaluation. Each launch is one Raft entry that also
// records the launch time in the replicated state and is refused unless it
// is later than the recorded one: whichever leader makes a launch, it
// happens once. A new leader starts from the recorded launches alone; a
// launch missed while no leader ran is made once, at once, as Nomad does.

// periodicErrorRetry is how long the dispatcher waits after a failed
// launch before it tries again.
const periodicErrorRetry = 5 * time.Second

// runPeriodic launches periodic jobs' children until ctx ends. It wakes at
// the earliest next launch or when a job changes.
func (l *Leader) runPeriodic(ctx context.Context) {
	// skipped remembers launches skipped by prohibit_overlap this term, so
	// that the next one is computed from them.
	skipped := map[string]time.Time{}
	for ctx.Err() == nil {
		ws := memdb.NewWatchSet()
		snap := l.store().Snapshot().WithWatch(ws)
		wake, err := l.launchDue(ctx, snap, skipped)
		if err != nil && ctx.Err() == nil {
			l.logger.Warn("periodic launch failed; retrying", "error", err)
			wake = l.clock.Now().Add(periodicErrorRetry)
		}
		waitCtx, cancel := context.WithCancel(ctx)
		if !wake.IsZero() {
			t := l.clock.AfterFunc(wake.Sub(l.clock.Now()), cancel)
			_ = ws.WatchCtx(waitCtx)
			t.Stop()
		} else {
			_ = ws.WatchCtx(waitCtx)
		}
		cancel()
	}
}

// launchDue launches every periodic job whose next launch is due and
// returns the earliest launch to come (zero when none).
func (l *Leader) launchDue(ctx context.Context, snap *state.Snapshot, skipped map[string]time.Time) (time.Time, error) {
	jobs, err := snap.Jobs()
	if err != nil {
		return time.Time{}, err
	}
	now := l.clock.Now()
	var wake time.Time
	var firstErr error
	for _, j := range jobs {
		if !j.IsPeriodicActive() {
			continue
		}
		base, err := l.launchBase(snap, j, skipped)
		if err != nil {
			return time.Time{}, err
		}
		next := j.Periodic.Next(base)
		if next.IsZero() {
			continue
		}
		if !next.After(now) {
			// Due (or missed): launch once, at the latest due time.
			at := latestDue(j.Periodic, next, now)
			if launched, err := l.launchPeriodic(ctx, snap, j, at, false); err != nil {
				firstErr = errors.Join(firstErr, err)
			} else if !launched {
				skipped[key(j)] = at
			}
			next = j.Periodic.Next(at)
		}
		if !next.IsZero() && (wake.IsZero() || next.Before(wake)) {
			wake = next
		}
	}
	return wake, firstErr
}

func key(j *structs.Job) string { return j.Namespace + "/" + j.ID }

// launchBase is the time after which a job's next launch comes: its
// recorded launch, a launch skipped this term, or, for a job never
// launched, its version's submit time.
func (l *Leader) launchBase(snap *state.Snapshot, j *structs.Job, skipped map[string]time.Time) (time.Time, error) {
	base := time.Unix(0, j.SubmitTime)
	rec, err := snap.PeriodicLaunchByID(j.Namespace, j.ID)
	if err != nil {
		return time.Time{}, err
	}
	if rec != nil && time.Unix(0, rec.Launch).After(base) {
		base = time.Unix(0, rec.Launch)
	}
	if s, ok := skipped[key(j)]; ok && s.After(base) {
		base = s
	}
	return base, nil
}

// latestDue returns the last launch time at or before now, starting from
// first (which is due); a long outage yields one launch, not many. The
// walk is bounded: past the bound, now itself is the launch time.
func latestDue(p *structs.PeriodicConfig, first, now time.Time) time.Time {
	at := first
	for range 10000 {
		n := p.Next(at)
		if n.IsZero() || n.After(now) {
			return at
		}
		at = n
	}
	return now.Truncate(time.Second)
}

// launchPeriodic registers the child of j launched at at, with its
// evaluation and the launch record, in one entry. With prohibit_overlap
// (and not forced) a launch while a child still runs is skipped: it
// answers false. A launch that another leader already made is not an
// error.
func (l *Leader) launchPeriodic(ctx context.Context, snap *state.Snapshot, j *structs.Job, at time.Time, force bool) (bool, error) {
	if j.Periodic.ProhibitOverlap && !force {
		children, err := snap.PeriodicChildren(j.Namespace, j.ID)
		if err != nil {
			return false, err
		}
		for _, c := range children {
			if c.Status != structs.JobStatusDead {
				l.logger.Info("periodic launch skipped: a child still runs (prohibit_overlap)", "job", j.ID, "child", c.ID)
				return false, nil
			}
		}
	}
	child := j.Copy()
	child.ID = structs.PeriodicChildID(j.ID, at)
	child.Name = child.ID
	child.ParentID = j.ID
	child.Periodic = nil
	child.Status, child.StatusDescription = "", ""
	child.Stable, child.Version, child.RevertOf = false, 0, nil
	structs.CanonicalizeScaling(child, nil, l.newID)
	now := l.clock.Now().UnixNano()
	eval := l.jobEval(child.Namespace, child.ID, child.Type, child.Priority, structs.EvalTriggerPeriodicJob, now)
	_, _, err := l.apply(ctx, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{
		Job: child, Eval: eval, SubmitTime: now,
		PeriodicLaunch: &structs.PeriodicLaunch{Namespace: j.Namespace, ID: j.ID, Launch: at.UnixNano()},
	})
	if errors.Is(err, state.ErrConflict) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("launching %s: %w", child.ID, err)
	}
	l.logger.Info("periodic job launched", "job", j.ID, "child", child.ID)
	return true, nil
}

// PeriodicForceResponse answers ForcePeriodic, as Nomad's
// PeriodicForceResponse.
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	Index           uint64
}

// ForcePeriodic launches a periodic job's child now, whatever its
// schedule and prohibit_overlap (`job periodic force`).
func (l *Leader) ForcePeriodic(ctx context.Context, namespace, jobID string) (*PeriodicForceResponse, error) {
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	snap := l.store().Snapshot()
	j, err := snap.JobByID(namespace, jobID)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return nil, fmt.Errorf("%w: %q", ErrJobNotFound, jobID)
	}
	if !j.IsPeriodic() {
		return nil, fmt.Errorf("%w: job %q is not periodic", ErrInvalidRequest, jobID)
	}
	if j.Stop {
		return nil, fmt.Errorf("%w: job %q is stopped", ErrInvalidRequest, jobID)
	}
	at := l.clock.Now().Truncate(time.Second)
	if rec, _ := snap.PeriodicLaunchByID(namespace, jobID); rec != nil && !at.After(time.Unix(0, rec.Launch)) {
		// Two launches in one second would share a child ID.
		at = time.Unix(0, rec.Launch).Truncate(time.Second).Add(time.Second)
	}
	if _, err := l.launchPeriodic(ctx, snap, j, at, true); err != nil {
		return nil, err
	}
	child, err := l.store().Snapshot().JobByID(namespace, structs.PeriodicChildID(jobID, at))
	if err != nil || child == nil {
		return nil, fmt.Errorf("launched child %s not found: %v", structs.PeriodicChildID(jobID, at), err)
	}
	evals, err := l.store().Snapshot().EvalsByJob(namespace, child.ID)
	if err != nil {
		return nil, err
	}
	sort.Slice(evals, func(a, b int) bool { return evals[a].CreateIndex < evals[b].CreateIndex })
	out := &PeriodicForceResponse{Index: child.CreateIndex}
	if len(evals) > 0 {
		out.EvalID, out.EvalCreateIndex = evals[0].ID, evals[0].CreateIndex
	}
	return out, nil
}
