package deployment

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// randomGroupObservation builds a running or paused deployment of a job
// that rolls its groups in order, with random figures, states and DoneAt,
// decided from the live figures.
func randomGroupObservation(r *rand.Rand) Observation {
	job := &structs.Job{ID: "web", Namespace: "default", Version: 2,
		Update: &structs.UpdateStrategy{PauseBetweenGroups: time.Duration(r.IntN(3)) * time.Minute}}
	d := &structs.Deployment{ID: "d1", JobID: "web", JobVersion: 2, Status: structs.DeploymentStatusRunning,
		StatusDescription: structs.DeploymentStatusDescriptionRunning, TaskGroups: map[string]*structs.DeploymentState{}}
	if r.IntN(4) == 0 {
		d.Status = structs.DeploymentStatusPaused
	}
	states := []string{structs.GroupStateWaiting, structs.GroupStateRolling, structs.GroupStateDone, structs.GroupStateFailed}
	for i := range 1 + r.IntN(4) {
		name := fmt.Sprintf("g%d", i+1)
		job.Update.GroupOrder = append(job.Update.GroupOrder, name)
		s := &structs.DeploymentState{DesiredTotal: 1 + r.IntN(4), ProgressDeadline: 10 * time.Minute,
			RequireProgressBy: t0.Add(time.Duration(r.IntN(40)) * time.Minute),
			OnFailure:         []string{structs.OnFailurePause, structs.OnFailureFail}[r.IntN(2)],
			Order:             i + 1, State: states[r.IntN(len(states))]}
		s.LiveHealthyAllocs = r.IntN(s.DesiredTotal + 1)
		if r.IntN(2) == 0 {
			s.DoneAt = t0.Add(time.Duration(r.IntN(30)) * time.Minute)
		}
		d.TaskGroups[name] = s
		job.TaskGroups = append(job.TaskGroups, &structs.TaskGroup{Name: name, Count: s.DesiredTotal,
			Update: &structs.UpdateStrategy{MaxParallel: 1}, ReschedulePolicy: &structs.ReschedulePolicy{Unlimited: true}})
	}
	return Observation{Deployment: d, Job: job, LatestJob: job, FromFigures: true, LatestEvalIndex: 1,
		Now: t0.Add(time.Duration(r.IntN(40)) * time.Minute)}
}

// TestGroupOrderDecisionProperties checks the group transitions of Decide
// on random observations: a group starts only from waiting, on a running
// deployment that does not pause (unless the group is done at once and a
// later one then fails the serving check), once every earlier group is done and
// fully serving and pause_between_groups has passed since the DoneAt of
// the group just before it; done only with all its allocs healthy, DoneAt
// at now and only then; failed only on a failure and never from waiting;
// and the transitions, applied, leave nothing more to write at the same
// instant.
func TestGroupOrderDecisionProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := range n {
		obs := randomGroupObservation(r)
		d := obs.Deployment
		dec := Decide(obs)
		status := d.Status
		if dec.Status != "" {
			status = dec.Status
		}
		stateOf := func(name string) string {
			if st, ok := dec.GroupStates[name]; ok {
				return st
			}
			return d.TaskGroups[name].State
		}
		doneAtOf := func(name string) time.Time {
			if at, ok := dec.GroupDoneAt[name]; ok {
				return at
			}
			return d.TaskGroups[name].DoneAt
		}
		order := obs.Job.Update.GroupOrder
		for k, name := range order {
			s := d.TaskGroups[name]
			if at, ok := dec.GroupDoneAt[name]; ok {
				if !at.Equal(obs.Now) || dec.GroupStates[name] != structs.GroupStateDone {
					t.Fatalf("case %d: group %s %+v DoneAt %v in %v", i, name, *s, at, dec)
				}
			}
			st, moved := dec.GroupStates[name]
			if !moved {
				continue
			}
			switch st {
			case structs.GroupStateDone:
				if s.LiveHealthyAllocs < s.DesiredTotal || (s.State != structs.GroupStateRolling && s.State != structs.GroupStateWaiting) {
					t.Fatalf("case %d: group %s %+v done", i, name, *s)
				}
				if s.State == structs.GroupStateWaiting {
					// Started and done at once: as a start, but a
					// group after it may pause the deployment then.
					st = structs.GroupStateRolling
				}
			case structs.GroupStateFailed:
				if s.State == structs.GroupStateWaiting || dec.Status == "" && d.Status != structs.DeploymentStatusPaused {
					t.Fatalf("case %d: group %s %+v failed in %v", i, name, *s, dec)
				}
			}
			if st == structs.GroupStateRolling {
				stays := dec.GroupStates[name] == structs.GroupStateRolling
				if s.State != structs.GroupStateWaiting || d.Status != structs.DeploymentStatusRunning ||
					stays && (status == structs.DeploymentStatusPaused || status == structs.DeploymentStatusFailed) {
					t.Fatalf("case %d: group %s %+v started on a %s deployment", i, name, *s, status)
				}
				for _, prev := range order[:k] {
					ps := d.TaskGroups[prev]
					if stateOf(prev) != structs.GroupStateDone || ps.LiveHealthyAllocs < ps.DesiredTotal {
						t.Fatalf("case %d: group %s started before %s %+v", i, name, prev, *ps)
					}
				}
				if k > 0 && obs.Now.Before(doneAtOf(order[k-1]).Add(obs.Job.Update.PauseBetweenGroups)) {
					t.Fatalf("case %d: group %s started before the pause after %s", i, name, order[k-1])
				}
			} else if st != structs.GroupStateDone && st != structs.GroupStateFailed {
				t.Fatalf("case %d: group %s turned %q", i, name, st)
			}
		}
		if !dec.WakeAt.IsZero() && !dec.WakeAt.After(obs.Now) {
			t.Fatalf("case %d: WakeAt %v not after now %v", i, dec.WakeAt, obs.Now)
		}
		if dec.Status == structs.DeploymentStatusFailed || dec.Status == structs.DeploymentStatusSuccessful {
			continue
		}
		// Written, the groups have nothing more to say now.
		next := obs
		next.Deployment = d.Copy()
		if dec.Status != "" {
			next.Deployment.Status = dec.Status
		}
		if dec.StatusDescription != "" {
			next.Deployment.StatusDescription = dec.StatusDescription
		}
		for name, st := range dec.GroupStates {
			ns := next.Deployment.TaskGroups[name]
			if ns.State == structs.GroupStateWaiting && st != structs.GroupStateWaiting {
				// A start restarts the group's progress deadline, as
				// the store does.
				ns.RequireProgressBy = later(ns.RequireProgressBy, obs.Now.Add(ns.ProgressDeadline))
			}
			ns.State = st
		}
		for name, at := range dec.GroupDoneAt {
			next.Deployment.TaskGroups[name].DoneAt = at
		}
		for name, n := range dec.FailuresAtPause {
			next.Deployment.TaskGroups[name].FailuresAtPause = n
		}
		if again := Decide(next); len(again.GroupStates) > 0 || len(again.GroupDoneAt) > 0 {
			t.Fatalf("case %d: groups moved again after %v: %v", i, dec, again)
		}
	}
}
