package fsm

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// logGen writes a plausible mixed log by playing a leader against an FSM:
// each entry is built from the FSM's current state, applied, and recorded.
type logGen struct {
	t     testing.TB
	f     *FSM
	rng   *rand.Rand
	log   []*raft.Log
	seq   int
	nodes []*structs.Node
}

func (g *logGen) now() time.Time { return statetest.T0.Add(time.Duration(len(g.log)) * time.Second) }

func (g *logGen) id(kind string) string {
	g.seq++
	return statetest.ID(fmt.Sprintf("%s/%d", kind, g.seq))
}

func (g *logGen) emit(mt MessageType, req any) {
	l := &raft.Log{Index: uint64(len(g.log) + 1), Type: raft.LogCommand, Data: entry(g.t, mt, req)}
	g.log = append(g.log, l)
	g.f.Apply(l) // rejections are part of the log too
}

func (g *logGen) eval(job *structs.Job, trigger string) *structs.Evaluation {
	e := statetest.Eval("x", job)
	e.ID, e.TriggeredBy = g.id("eval"), trigger
	e.CreateTime, e.ModifyTime = g.now().UnixNano(), g.now().UnixNano()
	return e
}

func pick[T any](g *logGen, xs []T) (T, bool) {
	var zero T
	if len(xs) == 0 {
		return zero, false
	}
	return xs[g.rng.IntN(len(xs))], true
}

func (g *logGen) step() {
	s := snap(g.f)
	jobs, _ := s.Jobs()
	allocs, _ := s.Allocs()
	deps, _ := s.Deployments()
	switch r := g.rng.IntN(100); {
	case len(g.nodes) < 5 || r < 3:
		n := statetest.Node(fmt.Sprintf("n%d", len(g.nodes)))
		g.nodes = append(g.nodes, n)
		g.emit(NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	case len(jobs) < 3 || r < 15:
		job := statetest.Job(fmt.Sprintf("job%d", g.rng.IntN(6)), 1+g.rng.IntN(3))
		job.Meta["rev"] = fmt.Sprint(g.rng.IntN(3))
		job.TaskGroups[0].Update.Canary = g.rng.IntN(2)
		if g.rng.IntN(4) == 0 {
			v := uint64(g.rng.IntN(3))
			job.RevertOf = &v
		}
		g.emit(JobRegisterRequestType, &structs.JobRegisterRequest{
			Job: job, Eval: g.eval(job, structs.EvalTriggerJobRegister), SubmitTime: g.now().UnixNano()})
	case r < 40:
		job, _ := pick(g, jobs)
		if job.Stop {
			return
		}
		req := &structs.ApplyPlanResultsRequest{EvalID: g.id("eval"), Job: job, UpdatedAt: g.now().UnixNano()}
		latest, _ := s.LatestDeploymentByJob(job.Namespace, job.ID)
		depID := ""
		if latest == nil || latest.JobVersion != job.Version {
			dep := statetest.Deployment(job, job.TaskGroups[0].Update.Canary)
			dep.ID = g.id("deployment")
			dep.TaskGroups["web"].OnFailure = []string{"", structs.OnFailurePause, structs.OnFailureRevert}[g.rng.IntN(3)]
			dep.RevertOf = job.RevertOf
			if g.rng.IntN(2) == 0 {
				// Zones (C.4), as the scheduler writes them.
				for i, name := range detZones {
					st := structs.ZoneStateWaiting
					if i == 0 {
						st = structs.ZoneStateRolling
					}
					dep.TaskGroups["web"].Zones = append(dep.TaskGroups["web"].Zones,
						&structs.ZoneState{Name: name, Size: 1 + g.rng.IntN(3), State: st})
				}
			}
			if g.rng.IntN(2) == 0 {
				// Groups one at a time (C.10), as the scheduler writes
				// them: the job's only group first, and rolling.
				dep.TaskGroups["web"].Order, dep.TaskGroups["web"].State = 1, structs.GroupStateRolling
			}
			req.Deployment, depID = dep, dep.ID
		} else if latest.Active() {
			depID = latest.ID
		}
		for i := range 1 + g.rng.IntN(3) {
			n, _ := pick(g, g.nodes)
			a := statetest.Alloc(job, n, req.EvalID, depID, i)
			a.ID, a.Job = g.id("alloc"), nil
			if a.DeploymentStatus != nil {
				a.DeploymentStatus.Canary = g.rng.IntN(3) == 0
			}
			a.Zone = detZones[g.rng.IntN(len(detZones))]
			req.AllocsPlaced = append(req.AllocsPlaced, a)
		}
		if old, ok := pick(g, allocs); ok && old.JobID == job.ID {
			req.AllocsStopped = append(req.AllocsStopped, &structs.AllocStopUpdate{AllocID: old.ID, DesiredDescription: structs.AllocUpdating})
		}
		g.emit(ApplyPlanResultsRequestType, req)
	case r < 60:
		req := &structs.AllocClientUpdateRequest{UpdatedAt: g.now().UnixNano()}
		for range 1 + g.rng.IntN(4) {
			a, ok := pick(g, allocs)
			if !ok {
				return
			}
			u := &structs.Allocation{ID: a.ID, ClientStatus: []string{"running", "failed", "complete"}[g.rng.IntN(3)]}
			if g.rng.IntN(2) == 0 {
				u.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: statetest.Bool(g.rng.IntN(4) != 0)}
				if g.rng.IntN(2) == 0 {
					u.DeploymentStatus.Timestamp = g.now().Add(-time.Duration(g.rng.IntN(10)) * time.Second)
				}
			}
			req.Allocs = append(req.Allocs, u)
		}
		g.emit(AllocClientUpdateRequestType, req)
	case r < 68:
		evals, _ := s.Evals()
		e, ok := pick(g, evals)
		if !ok {
			return
		}
		c := e.Copy()
		c.Status = []string{structs.EvalStatusComplete, structs.EvalStatusBlocked, structs.EvalStatusFailed}[g.rng.IntN(3)]
		c.ModifyTime = g.now().UnixNano()
		g.emit(EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{c}})
	case r < 73:
		d, ok := pick(g, deps)
		if !ok {
			return
		}
		g.emit(DeploymentPromoteRequestType, &structs.DeploymentPromoteRequest{DeploymentID: d.ID, All: true, PromotedAt: g.now()})
	case r < 78:
		d, ok := pick(g, deps)
		if !ok {
			return
		}
		das, _ := s.AllocsByDeployment(d.ID)
		req := &structs.DeploymentAllocHealthRequest{DeploymentID: d.ID, Timestamp: g.now()}
		for _, a := range das {
			if g.rng.IntN(2) == 0 {
				req.HealthyAllocationIDs = append(req.HealthyAllocationIDs, a.ID)
			}
		}
		g.emit(DeploymentAllocHealthRequestType, req)
	case r < 85:
		d, ok := pick(g, deps)
		if !ok {
			return
		}
		status := []string{structs.DeploymentStatusPaused, structs.DeploymentStatusRunning, structs.DeploymentStatusFailed, structs.DeploymentStatusSuccessful}[g.rng.IntN(4)]
		u := &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: status, StatusDescription: "set by test"}
		// The rollout bookkeeping of part C: checkpoints, failures at a
		// pause and a checkpoint delay, stamped by the leader.
		if g.rng.IntN(2) == 0 {
			u.CheckpointsReached = map[string]int{"web": 1 + g.rng.IntN(3)}
			u.FailuresAtPause = map[string]int{"web": g.rng.IntN(3)}
			u.ResumeAt = g.now().Add(time.Duration(1+g.rng.IntN(10)) * time.Minute)
		}
		// Zone transitions (C.4), stamped by the leader too.
		if g.rng.IntN(2) == 0 {
			zone := detZones[g.rng.IntN(len(detZones))]
			u.ZoneStates = map[string]map[string]string{"web": {zone: []string{
				structs.ZoneStateRolling, structs.ZoneStateDone, structs.ZoneStateFailed}[g.rng.IntN(3)]}}
			u.ZoneDoneAt = map[string]map[string]time.Time{"web": {zone: g.now()}}
			if g.rng.IntN(2) == 0 {
				u.ZoneFailedReset = map[string][]string{"web": {detZones[g.rng.IntN(len(detZones))]}}
			}
		}
		// Group transitions (C.10), stamped by the leader too.
		if g.rng.IntN(2) == 0 {
			u.GroupStates = map[string]string{"web": []string{structs.GroupStateRolling, structs.GroupStateDone,
				structs.GroupStateFailed, structs.GroupStateWaiting}[g.rng.IntN(4)]}
			u.GroupDoneAt = map[string]time.Time{"web": g.now()}
		}
		g.emit(DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: u,
			UpdatedAt:        g.now().UnixNano(),
		})
	case r < 90:
		job, ok := pick(g, jobs)
		if !ok {
			return
		}
		g.emit(JobStabilityRequestType, &structs.JobStabilityRequest{Namespace: job.Namespace, JobID: job.ID, JobVersion: job.Version, Stable: true})
	case r < 92:
		req := &structs.AllocUpdateDesiredTransitionRequest{Allocs: map[string]*structs.DesiredTransition{}, UpdatedAt: g.now().UnixNano()}
		for range 1 + g.rng.IntN(3) {
			if a, ok := pick(g, allocs); ok {
				if g.rng.IntN(2) == 0 {
					req.Allocs[a.ID] = &structs.DesiredTransition{Migrate: statetest.Bool(true)}
				} else {
					req.Allocs[a.ID] = &structs.DesiredTransition{Reschedule: statetest.Bool(true)}
				}
			}
		}
		g.emit(AllocUpdateDesiredTransitionRequestType, req)
	case r < 95:
		n, _ := pick(g, g.nodes)
		switch g.rng.IntN(4) {
		case 0:
			// A drain set, updated, cancelled or completed (refused when
			// it is not the node's), with its events; times stamped by
			// the leader.
			req := &structs.NodeUpdateDrainRequest{NodeID: n.ID, UpdatedAt: g.now().UnixNano(),
				Meta: map[string]string{"message": "patch"}, MarkEligible: g.rng.IntN(2) == 0,
				NodeEvents: []*structs.NodeEvent{{Message: structs.NodeDrainEventDrainSet, Subsystem: structs.NodeEventSubsystemDrain, Timestamp: g.now()}}}
			switch g.rng.IntN(3) {
			case 0:
				req.DrainStrategy = &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour},
					StartedAt: g.now(), ForceDeadline: g.now().Add(time.Hour)}
			case 1:
				req.DrainComplete = true
				if cur, _ := s.NodeByID(n.ID); cur != nil && cur.DrainStrategy != nil {
					req.DrainStartedAt = cur.DrainStrategy.StartedAt
				}
			}
			g.emit(NodeUpdateDrainRequestType, req)
		case 1:
			elig := []string{structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible}[g.rng.IntN(2)]
			g.emit(NodeUpdateEligibilityRequestType, &structs.NodeUpdateEligibilityRequest{NodeID: n.ID, Eligibility: elig, UpdatedAt: g.now().UnixNano(),
				NodeEvents: []*structs.NodeEvent{{Message: structs.NodeEligibilityEventIneligible, Subsystem: structs.NodeEventSubsystemCluster, Timestamp: g.now()}}})
		default:
			status := []string{structs.NodeStatusDown, structs.NodeStatusReady}[g.rng.IntN(2)]
			g.emit(NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{NodeID: n.ID, Status: status, UpdatedAt: g.now().UnixNano()})
		}
	case r < 96:
		req := &structs.EvalReapRequest{}
		if a, ok := pick(g, allocs); ok && a.TerminalStatus() {
			req.Allocs = append(req.Allocs, a.ID)
		}
		evals, _ := s.Evals()
		if e, ok := pick(g, evals); ok && e.Terminal() {
			req.Evals = append(req.Evals, e.ID)
		}
		g.emit(EvalReapRequestType, req)
	case r < 97:
		job, ok := pick(g, jobs)
		if !ok {
			return
		}
		g.emit(JobDeregisterRequestType, &structs.JobDeregisterRequest{Namespace: job.Namespace, JobID: job.ID,
			Purge: g.rng.IntN(3) == 0, Eval: g.eval(job, structs.EvalTriggerJobDeregister), SubmitTime: g.now().UnixNano()})
	default:
		l := &raft.Log{Index: uint64(len(g.log) + 1), Type: raft.LogCommand, Data: []byte{0xf0, 1, 2}}
		g.log = append(g.log, l)
		g.f.Apply(l)
	}
}

// detZones are the zones of the generated allocs and deployments ("" is
// the zone of nodes without the attribute).
var detZones = []string{"a", "b", ""}

// mixedLog returns an FSM that applied n generated entries, and the log.
func mixedLog(t testing.TB, n int) (*FSM, []*raft.Log) {
	g := &logGen{t: t, f: newTestFSM(t), rng: rand.New(rand.NewPCG(7, 11))}
	for len(g.log) < n {
		g.step()
	}
	return g.f, g.log
}

func TestDeterminism(t *testing.T) {
	a, log := mixedLog(t, 400)
	b := newTestFSM(t)
	for _, l := range log {
		b.Apply(l)
	}
	da, db := dump(t, a), dump(t, b)
	if da != db {
		t.Fatalf("same log, different state:\n%s", firstDiff(da, db))
	}
	s := snap(a)
	for _, check := range []struct {
		name string
		n    func() (int, error)
	}{
		{"jobs", func() (int, error) { x, err := s.Jobs(); return len(x), err }},
		{"allocs", func() (int, error) { x, err := s.Allocs(); return len(x), err }},
		{"deployments", func() (int, error) { x, err := s.Deployments(); return len(x), err }},
	} {
		if n, err := check.n(); err != nil || n == 0 {
			t.Errorf("generated log left no %s (%v): the test would prove little", check.name, err)
		}
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	a, _ := mixedLog(t, 300)
	var buf bytes.Buffer
	fs, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	fs.Release()
	// Restore into an FSM that already holds other state: it is replaced.
	b := newTestFSM(t)
	applyOK(t, b, 1, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: statetest.Node("stray")})
	old := b.State()
	if err := b.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if da, db := dump(t, a), dump(t, b); da != db {
		t.Fatalf("restored state differs:\n%s", firstDiff(da, db))
	}
	// The deployments' live figures are part of their rows, so the dumps
	// above compare them; make sure the log left some to compare.
	deps, err := snap(b).Deployments()
	if err != nil {
		t.Fatal(err)
	}
	live := false
	for _, d := range deps {
		for _, g := range d.TaskGroups {
			live = live || (d.HealthIndex > 0 && g.LiveHealthyAllocs > 0)
		}
	}
	if !live {
		t.Fatal("no restored deployment has live figures: the round trip would prove little for them")
	}
	// Nor for the rollout bookkeeping (part C), zones included.
	var paused, resumeAt, marks, revert bool
	var zoneFigures, zoneFailed, zoneDone, zoneState bool
	var groupOrder, groupDone, groupState bool
	for _, d := range deps {
		paused = paused || !d.PausedAt.IsZero()
		resumeAt = resumeAt || !d.ResumeAt.IsZero()
		revert = revert || d.RevertOf != nil
		for _, g := range d.TaskGroups {
			marks = marks || g.CheckpointsReached > 0 && g.OnFailure != ""
			groupOrder = groupOrder || g.Order > 0
			groupDone = groupDone || !g.DoneAt.IsZero()
			groupState = groupState || g.State == structs.GroupStateDone || g.State == structs.GroupStateFailed
			for _, z := range g.Zones {
				zoneFigures = zoneFigures || z.Healthy > 0 || z.InFlight > 0
				zoneFailed = zoneFailed || z.Failed > 0
				zoneDone = zoneDone || !z.DoneAt.IsZero()
				zoneState = zoneState || z.State == structs.ZoneStateDone || z.State == structs.ZoneStateFailed
			}
		}
	}
	if !paused || !resumeAt || !marks || !revert {
		t.Fatalf("restored deployments lack bookkeeping to compare: paused %v resume %v marks %v revert %v", paused, resumeAt, marks, revert)
	}
	if !zoneFigures || !zoneFailed || !zoneDone || !zoneState {
		t.Fatalf("restored deployments lack zones to compare: figures %v failed %v done-at %v states %v", zoneFigures, zoneFailed, zoneDone, zoneState)
	}
	if !groupOrder || !groupDone || !groupState {
		t.Fatalf("restored deployments lack ordered groups to compare: order %v done-at %v states %v", groupOrder, groupDone, groupState)
	}
	select {
	case <-old.AbandonCh():
	default:
		t.Fatal("old store not abandoned on restore")
	}
	if n, _ := old.Snapshot().NodeByID(statetest.Node("stray").ID); n == nil {
		t.Fatal("readers of the old store lost their view")
	}
	// Applying to the restored FSM continues from where it was.
	applyOK(t, b, 10000, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: statetest.Node("after")})
}

func TestRestoreRejectsBadSnapshots(t *testing.T) {
	a, _ := mixedLog(t, 50)
	var buf bytes.Buffer
	fs, _ := a.Snapshot()
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	full := buf.Bytes()
	for name, data := range map[string][]byte{
		"empty":     nil,
		"truncated": full[:len(full)-1],
		"half":      full[:len(full)/2],
		"garbage":   []byte("not a snapshot at all"),
	} {
		t.Run(name, func(t *testing.T) {
			b := newTestFSM(t)
			before := b.State()
			err := b.Restore(nopCloser{bytes.NewReader(data)})
			if err == nil {
				t.Fatal("bad snapshot restored")
			}
			if b.State() != before {
				t.Fatal("failed restore replaced the store")
			}
		})
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func firstDiff(a, b string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			lo := max(0, i-300)
			return fmt.Sprintf("at byte %d:\n--- a\n%s\n--- b\n%s", i, a[lo:min(len(a), i+300)], b[lo:min(len(b), i+300)])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}
