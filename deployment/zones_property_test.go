package deployment

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// randomZoneObservation builds a running or paused deployment of one group
// that rolls out by zones, with random zone figures, states and DoneAt,
// decided from the live figures.
func randomZoneObservation(r *rand.Rand) Observation {
	z := &structs.ZoneStrategy{Attribute: "${meta.zone}", Mode: structs.ZoneModeByZone,
		PauseBetweenZones: time.Duration(r.IntN(3)) * time.Minute}
	if r.IntN(3) == 0 {
		z.Mode = structs.ZoneModeConcurrent
		z.PauseBetweenZones = 0
	}
	if r.IntN(2) == 0 {
		z.DisruptionBudget = &structs.Amount{Value: 1 + r.IntN(3)}
	}
	if r.IntN(2) == 0 && z.ByZone() {
		z.SuccessThreshold = &structs.Amount{Value: 25 * (1 + r.IntN(4)), Percent: true}
	}
	s := &structs.DeploymentState{ProgressDeadline: 10 * time.Minute, RequireProgressBy: t0.Add(time.Duration(r.IntN(40)) * time.Minute),
		OnFailure: []string{structs.OnFailurePause, structs.OnFailureFail}[r.IntN(2)]}
	states := []string{structs.ZoneStateWaiting, structs.ZoneStateRolling, structs.ZoneStateDone, structs.ZoneStateFailed}
	for i := range 1 + r.IntN(4) {
		zs := &structs.ZoneState{Name: fmt.Sprintf("z%d", i), Size: 1 + r.IntN(4), State: states[r.IntN(len(states))]}
		zs.Healthy = r.IntN(zs.Size + 1)
		zs.InFlight = r.IntN(zs.Size - zs.Healthy + 1)
		zs.Failed = r.IntN(3)
		if r.IntN(2) == 0 {
			zs.DoneAt = t0.Add(time.Duration(r.IntN(30)) * time.Minute)
		}
		s.Zones = append(s.Zones, zs)
		s.DesiredTotal += zs.Size
		s.LiveHealthyAllocs += zs.Healthy
	}
	job := &structs.Job{ID: "web", Namespace: "default", Version: 2, TaskGroups: []*structs.TaskGroup{{
		Name: "web", Count: s.DesiredTotal, Update: &structs.UpdateStrategy{MaxParallel: 1, Zones: z},
		ReschedulePolicy: &structs.ReschedulePolicy{Unlimited: true}}}}
	status := structs.DeploymentStatusRunning
	if r.IntN(4) == 0 {
		status = structs.DeploymentStatusPaused
	}
	d := &structs.Deployment{ID: "d1", JobID: "web", JobVersion: 2, Status: status,
		StatusDescription: structs.DeploymentStatusDescriptionRunning, TaskGroups: map[string]*structs.DeploymentState{"web": s}}
	return Observation{Deployment: d, Job: job, LatestJob: job, FromFigures: true, LatestEvalIndex: 1,
		Now: t0.Add(time.Duration(r.IntN(40)) * time.Minute)}
}

// TestZoneDecisionProperties checks the zone transitions of Decide on
// random observations: a zone starts only after every earlier one is done
// or at its threshold, and pause_between_zones after the one before it;
// nothing starts on a deployment that is or becomes paused; done only with
// all its allocs healthy; DoneAt only once, at the threshold; a zone turns
// failed only at its budget; and the written transitions, applied, leave
// nothing more to write at the same instant (no write without a change)
// but the failure of a zone started with its budget spent.
func TestZoneDecisionProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := range n {
		obs := randomZoneObservation(r)
		s := obs.Deployment.TaskGroups["web"]
		z := obs.Job.TaskGroups[0].Update.Zones
		dec := Decide(obs)
		status := obs.Deployment.Status
		if dec.Status != "" {
			status = dec.Status
		}
		for k, zs := range s.Zones {
			st, moved := dec.ZoneStates["web"][zs.Name]
			if at, ok := dec.ZoneDoneAt["web"][zs.Name]; ok {
				if !zs.DoneAt.IsZero() || !at.Equal(obs.Now) || zs.Healthy < z.ThresholdFor(zs.Size) {
					t.Fatalf("case %d: zone %+v DoneAt %v", i, *zs, at)
				}
			}
			if !moved {
				continue
			}
			switch st {
			case structs.ZoneStateDone:
				if zs.Healthy < zs.Size {
					t.Fatalf("case %d: zone %+v done", i, *zs)
				}
			case structs.ZoneStateFailed:
				if n, ok := z.BudgetFor(zs.Size); !ok || zs.Failed < max(n, 1) || zs.State == structs.ZoneStateWaiting {
					t.Fatalf("case %d: zone %+v failed", i, *zs)
				}
			case structs.ZoneStateRolling:
				if zs.State != structs.ZoneStateWaiting || status != structs.DeploymentStatusRunning || !z.ByZone() {
					t.Fatalf("case %d: zone %+v started on a %s deployment", i, *zs, status)
				}
				for _, prev := range s.Zones[:k] {
					doneAt := prev.DoneAt
					if at, ok := dec.ZoneDoneAt["web"][prev.Name]; ok {
						doneAt = at
					}
					if ps := dec.ZoneStates["web"][prev.Name]; prev.State != structs.ZoneStateDone && ps != structs.ZoneStateDone && doneAt.IsZero() {
						t.Fatalf("case %d: zone %s started before %+v", i, zs.Name, *prev)
					}
					if prev == s.Zones[k-1] && obs.Now.Before(doneAt.Add(z.PauseBetweenZones)) {
						t.Fatalf("case %d: zone %s started before the pause after %+v", i, zs.Name, *prev)
					}
				}
			default:
				t.Fatalf("case %d: zone %s turned %q", i, zs.Name, st)
			}
		}
		if !dec.WakeAt.IsZero() && !dec.WakeAt.After(obs.Now) {
			t.Fatalf("case %d: WakeAt %v not after now %v", i, dec.WakeAt, obs.Now)
		}
		if dec.Status == structs.DeploymentStatusFailed || dec.Status == structs.DeploymentStatusSuccessful {
			continue
		}
		// Written, the zones have nothing more to say now.
		next := obs
		next.Deployment = obs.Deployment.Copy()
		if dec.Status != "" {
			next.Deployment.Status, next.Deployment.StatusDescription = dec.Status, dec.StatusDescription
		}
		ns := next.Deployment.TaskGroups["web"]
		for name, st := range dec.ZoneStates["web"] {
			ns.Zone(name).State = st
		}
		for name, at := range dec.ZoneDoneAt["web"] {
			ns.Zone(name).DoneAt = at
		}
		for name, n := range dec.FailuresAtPause {
			next.Deployment.TaskGroups[name].FailuresAtPause = n
		}
		// (A zone that just started with its budget already spent — by
		// unhealthy_first's first batch — fails in the next decision.)
		again := Decide(next)
		for name, st := range again.ZoneStates["web"] {
			if st != structs.ZoneStateFailed || s.Zone(name).State != structs.ZoneStateWaiting || dec.ZoneStates["web"][name] == "" {
				t.Fatalf("case %d: zone %s moved again after %v: %v", i, name, dec, again)
			}
		}
		if len(again.ZoneDoneAt) > 0 {
			t.Fatalf("case %d: DoneAt again after %v: %v", i, dec, again)
		}
	}
}
