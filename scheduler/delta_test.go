package scheduler

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// memoHistory drives a job through random rollouts as the servers would
// see it: each pass reads a store in which an alloc, once written, is
// never modified (a change writes a copy), in ID order.
type memoHistory struct {
	r      *rand.Rand
	job    *structs.Job
	nodes  []*structs.Node
	dep    *structs.Deployment
	allocs []*structs.Allocation          // the history's own, modified in place
	stored map[string]*structs.Allocation // what the store holds
	now    time.Time
	ids    int
	// chaos, 0 to 2, is how often things go wrong.
	chaos int
}

// input is the pass's view of the store: unchanged allocs keep their
// pointer, changed ones are new copies.
func (h *memoHistory) input() Input {
	out := make([]*structs.Allocation, 0, len(h.allocs))
	seen := map[string]bool{}
	for _, a := range h.allocs {
		s := h.stored[a.ID]
		if s == nil || !reflect.DeepEqual(s, a) {
			s = a.Copy()
			h.stored[a.ID] = s
		}
		seen[a.ID] = true
		out = append(out, s)
	}
	for id := range h.stored {
		if !seen[id] {
			delete(h.stored, id)
		}
	}
	slices.SortFunc(out, func(a, b *structs.Allocation) int { return strings.Compare(a.ID, b.ID) })
	return Input{Job: h.job, Allocs: out, Deployment: h.dep, Nodes: h.nodes, Now: h.now, EvalID: fmt.Sprint("eval", h.ids)}
}

// apply commits the plan, leaving out some placements at random (a plan
// the applier partly rejected).
func (h *memoHistory) apply(p *Plan) {
	if len(p.Place) > 1 && h.r.IntN(6) == 0 {
		q := *p
		q.Place = q.Place[:h.r.IntN(len(q.Place))]
		p = &q
	}
	ps := newPlanSim(Input{Job: h.job, Allocs: h.allocs, Deployment: h.dep, Nodes: h.nodes, Now: h.now})
	ps.apply(p)
	h.allocs, h.dep = ps.allocs, ps.dep
}

// perturb plays what happens between two passes: health reports (several
// at the same instant), failures, the watcher's marks, nodes going down
// and back, the deployment paused and resumed, new versions and scalings.
func (h *memoHistory) perturb() {
	h.now = h.now.Add(time.Duration(h.r.IntN(3)) * time.Second)
	yes := true
	for _, a := range h.allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientTerminalStatus() {
			continue
		}
		roll := h.r.IntN(100)
		if h.chaos == 0 && roll < 10 {
			roll += 10 // no failures, no marks
		}
		switch {
		case h.dep != nil && a.DeploymentID == h.dep.ID && (a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil):
			switch {
			case roll < 3:
				a.ClientStatus = structs.AllocClientStatusFailed
				a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: new(bool), Timestamp: h.now}
			case roll < 8:
				a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: new(bool), Timestamp: h.now}
			case roll < 60:
				a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: h.now}
			case roll < 65:
				a.ClientStatus = structs.AllocClientStatusPending
			}
		case roll < 2 && h.chaos > 1:
			a.ClientStatus = structs.AllocClientStatusRunning
			a.TaskStates = map[string]*structs.TaskState{"main": {State: structs.TaskStateRunning, StartedAt: h.now}}
		case roll == 2 && a.IsUnhealthy():
			a.DesiredTransition.Reschedule = &yes
		case roll == 3 && h.chaos > 0 && h.r.IntN(8) == 0:
			a.DesiredTransition.Migrate = &yes
		case roll == 4 && h.chaos > 0 && h.r.IntN(4) == 0:
			a.ClientStatus = structs.AllocClientStatusComplete
		}
	}
	roll := h.r.IntN(100)
	if h.chaos == 0 && roll < 4 {
		roll += 4 // no node goes down
	}
	switch {
	case roll < 4:
		n := h.r.IntN(len(h.nodes))
		c := *h.nodes[n]
		c.Status = pick(h.r, structs.NodeStatusDown, structs.NodeStatusReady)
		h.nodes = slices.Clone(h.nodes)
		h.nodes[n] = &c
	case roll < 8:
		// A node object rewritten without a change of status.
		n := h.r.IntN(len(h.nodes))
		c := *h.nodes[n]
		c.ModifyIndex++
		h.nodes = slices.Clone(h.nodes)
		h.nodes[n] = &c
	case roll < 11 && h.dep != nil && h.chaos > 0:
		d := h.dep.Copy()
		switch d.Status {
		case structs.DeploymentStatusRunning:
			d.Status = structs.DeploymentStatusPaused
		case structs.DeploymentStatusPaused:
			d.Status = structs.DeploymentStatusRunning
		}
		h.dep = d
	case roll < 13 && h.dep != nil:
		// The watcher's figures: a new deployment object, same ID.
		d := h.dep.Copy()
		d.ModifyIndex++
		h.dep = d
	case roll < 16 || roll < 20 && h.chaos == 0:
		h.newVersion(h.r.IntN(3) == 0)
	}
	h.moveTurn()
	h.moveZones()
}

// moveZones does the deployment watcher's part for groups rolled zone by
// zone: once the rolling zone's allocs all run the version and are
// healthy, it is done and the next waiting zone rolls.
func (h *memoHistory) moveZones() {
	if h.dep == nil {
		return
	}
	for _, tg := range h.job.TaskGroups {
		st := h.dep.TaskGroups[tg.Name]
		if tg.Update == nil || tg.Update.Zones == nil || st == nil || len(st.Zones) == 0 {
			continue
		}
		nodes := map[string]*structs.Node{}
		for _, n := range h.nodes {
			nodes[n.ID] = n
		}
		for i, z := range st.Zones {
			if z.State != structs.ZoneStateRolling {
				continue
			}
			done := true
			for _, a := range h.allocs {
				if a.TaskGroup != tg.Name || a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientTerminalStatus() {
					continue
				}
				zone := a.Zone
				if zone == "" {
					zone = structs.ZoneOf(nodes[a.NodeID], tg.Update.Zones.Attribute)
				}
				if zone == z.Name && (a.Job.Version != h.job.Version || !a.IsHealthy()) {
					done = false
				}
			}
			if !done {
				continue
			}
			d := h.dep.Copy()
			ds := d.TaskGroups[tg.Name]
			ds.Zones[i].State = structs.ZoneStateDone
			for _, w := range ds.Zones {
				if w.State == structs.ZoneStateWaiting {
					w.State = structs.ZoneStateRolling
					break
				}
			}
			h.dep = d
			return
		}
	}
}

// moveTurn does the deployment watcher's part for a job that rolls its
// groups one at a time: once the rolling group's allocs all run the
// version and are healthy, it is done and the next group's turn starts.
func (h *memoHistory) moveTurn() {
	order := h.job.GroupRolloutOrder()
	if order == nil || h.dep == nil || !hasGroupStates(h.dep) {
		return
	}
	for i, name := range order {
		st := h.dep.TaskGroups[name]
		if st == nil || st.State != structs.GroupStateRolling {
			continue
		}
		healthy := 0
		for _, a := range h.allocs {
			if a.TaskGroup != name || a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientTerminalStatus() {
				continue
			}
			if a.Job.Version != h.job.Version || !a.IsHealthy() {
				return
			}
			healthy++
		}
		if healthy != h.job.LookupTaskGroup(name).Count {
			return
		}
		d := h.dep.Copy()
		d.TaskGroups[name].State = structs.GroupStateDone
		if i+1 < len(order) && d.TaskGroups[order[i+1]] != nil {
			d.TaskGroups[order[i+1]].State = structs.GroupStateRolling
		}
		h.dep = d
		return
	}
}

// newVersion registers the job's next version: a destructive change, or
// with scale a change of count alone.
func (h *memoHistory) newVersion(scale bool) {
	j := h.job.Copy()
	j.Version++
	j.ModifyIndex++
	for _, tg := range j.TaskGroups {
		if scale {
			tg.Count = max(1, tg.Count+h.r.IntN(5)-2)
		} else {
			tg.Tasks[0].Env = map[string]string{"A": fmt.Sprint(j.Version)}
		}
	}
	h.job = j
}

func randomMemoUpdate(r *rand.Rand, count int, features bool) *structs.UpdateStrategy {
	u := structs.DefaultUpdateStrategy()
	u.MaxParallel = 1 + r.IntN(6)
	if r.IntN(4) == 0 {
		p := 10 + r.IntN(60)
		u.MaxParallelPercent = &p
		u.MaxParallel = u.ParallelFor(count)
	}
	if r.IntN(4) == 0 {
		u.FirstBatch = structs.Count(1 + r.IntN(3))
	}
	if r.IntN(4) == 0 {
		u.MaxFailed = randomAmount(r, 3)
	}
	if r.IntN(5) == 0 {
		u.Checkpoints = []structs.Amount{*structs.Percent(30), *structs.Count(max(2, count-1))}
	}
	if r.IntN(5) == 0 {
		u.Stagger, u.StaggerSet = time.Duration(1+r.IntN(3))*time.Second, true
	}
	// Now and then a feature the memo leaves to the full pass.
	if !features {
		return u
	}
	switch r.IntN(6) {
	case 0:
		u.Canary = 1
	case 1:
		u.MaxSurge = structs.Count(1)
	case 2:
		u.UnhealthyFirst = true
	}
	return u
}

// TestReconcileMemoMatchesFull checks the memo's pass against the full
// pass on random histories: at every pass the two plans are equal, field
// for field, and the memo's own pass served most of the plain ones.
func TestReconcileMemoMatchesFull(t *testing.T) {
	plainPasses, passes, inOrder, inZones := 0, 0, 0, 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 48))
		job := baseJob()
		groups := 1 + r.IntN(2)
		job.TaskGroups = job.TaskGroups[:1]
		for g := range groups {
			if g > 0 {
				tg := job.TaskGroups[0].Copy()
				tg.Name = "api"
				job.TaskGroups = append(job.TaskGroups, tg)
			}
			tg := job.TaskGroups[g]
			tg.Count = 1 + r.IntN(25)
			tg.Update = randomMemoUpdate(r, tg.Count, seed%3 > 0)
		}
		if groups > 1 && r.IntN(2) == 0 {
			job.Update = &structs.UpdateStrategy{GroupOrder: []string{"api", "web"}}
		}
		h := &memoHistory{r: r, job: job, now: baseTime, stored: map[string]*structs.Allocation{}, chaos: int(seed % 3)}
		zoned := seed%4 == 3
		for i := range 1 + r.IntN(4) + 3*b2i(zoned) {
			n := testNode(fmt.Sprintf("n%d", i), "ready")
			if zoned && i%5 != 4 {
				n.Meta = map[string]string{"zone": fmt.Sprintf("z%d", i%3)}
			}
			h.nodes = append(h.nodes, n)
		}
		if zoned {
			for _, tg := range job.TaskGroups {
				tg.Update.Zones = &structs.ZoneStrategy{Attribute: "${meta.zone}",
					Mode: pick(r, structs.ZoneModeByZone, structs.ZoneModeConcurrent)}
				if r.IntN(3) == 0 {
					tg.Update.Zones.DisruptionBudget = structs.Count(1 + r.IntN(2))
				}
				if r.IntN(3) == 0 {
					tg.Update.Zones.Order = []string{"z2"}
				}
			}
		}
		ok := true
		for _, tg := range job.TaskGroups {
			for i := range tg.Count {
				n := h.nodes[i%len(h.nodes)]
				h.allocs = append(h.allocs, &structs.Allocation{
					ID: fmt.Sprintf("%s-old%02d", tg.Name, i), Name: structs.AllocName(job.ID, tg.Name, i), JobID: job.ID, Job: job,
					TaskGroup: tg.Name, NodeID: n.ID, NodeName: n.ID, DesiredStatus: structs.AllocDesiredStatusRun,
					ClientStatus: structs.AllocClientStatusRunning, DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &ok},
				})
			}
		}
		h.newVersion(false)
		m := &Memo{}
		for step := range 80 {
			in := h.input()
			start := h.ids
			fullIDs, memoIDs := start, start
			in.IDs = func() string { fullIDs++; return fmt.Sprintf("a%04d", fullIDs) }
			full := Reconcile(in)
			in.IDs = func() string { memoIDs++; return fmt.Sprintf("a%04d", memoIDs) }
			if step%2 == 1 {
				// As the leader's passes: the nodes from a NodeTable.
				in.Table = NewNodeTable(in.Nodes)
			}
			before := m.plain
			got := ReconcileMemo(in, m)
			passes++
			if m.plain > before {
				plainPasses++
				if h.job.GroupsInOrder() {
					inOrder++
				}
				if zoned && len(got.Place) > 0 {
					inZones++
				}
			}
			if !reflect.DeepEqual(full, got) {
				t.Fatalf("seed %d step %d: the memo's plan differs from the full pass's\nfull:\n%s\nmemo:\n%s\ninput:\n%s",
					seed, step, full, got, dumpInput(in))
			}
			h.ids = fullIDs
			h.apply(full)
			h.perturb()
		}
	}
	t.Logf("%d passes, %d from the memo (%d of jobs rolling their groups in turn, %d placing by zones)", passes, plainPasses, inOrder, inZones)
	if plainPasses < passes/4 || inOrder < plainPasses/20 || inZones < plainPasses/50 {
		t.Fatalf("only %d of %d passes came from the memo: the histories do not exercise it", plainPasses, passes)
	}
}

// TestReconcileMemoReadsWhatChanged checks that a pass from the memo reads
// only the allocs that changed: an unchanged alloc's fact is kept, not
// worked out again.
func TestReconcileMemoReadsWhatChanged(t *testing.T) {
	job := baseJob()
	job.TaskGroups[0].Count = 100
	job.TaskGroups[0].Update.MaxParallel = 10
	h := &memoHistory{r: rand.New(rand.NewPCG(1, 2)), job: job, now: baseTime, stored: map[string]*structs.Allocation{},
		nodes: []*structs.Node{testNode("n0", "ready")}}
	ok := true
	for i := range 100 {
		h.allocs = append(h.allocs, &structs.Allocation{
			ID: fmt.Sprintf("old%03d", i), Name: structs.AllocName(job.ID, "web", i), JobID: job.ID, Job: job,
			TaskGroup: "web", NodeID: "n0", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning, DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &ok},
		})
	}
	h.newVersion(false)
	m := &Memo{}
	for step := range 30 {
		in := h.input()
		in.IDs = func() string { h.ids++; return fmt.Sprintf("a%04d", h.ids) }
		facts := m.facts
		p := ReconcileMemo(in, m)
		if step > 1 {
			// The pass placed 10 replacements and stopped 10 allocs;
			// their health came in: at most 10 new, 10 stopped, 10
			// healthy.
			if n := m.facts - facts; n > 30 {
				t.Fatalf("step %d: %d allocs read, want at most 30 of %d", step, n, len(in.Allocs))
			}
		}
		h.apply(p)
		yes := true
		for _, a := range h.allocs {
			if a.DeploymentStatus == nil {
				a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: h.now}
			}
		}
		h.now = h.now.Add(time.Second)
	}
	if m.plain < 9 || m.Rebuilds() != 1 {
		t.Fatalf("%d passes from the memo, %d rebuilds; want at least 9 and 1", m.plain, m.Rebuilds())
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMemoAllocsWith checks the job's allocs rebuilt from a memo and the
// allocs written since against the list read in full: random IDs, some
// changed, some gone, some new.
func TestMemoAllocsWith(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 48))
	job := baseJob()
	job.TaskGroups[0].Count = 50
	d := &structs.Deployment{ID: "d", JobID: job.ID, JobVersion: job.Version, JobCreateIndex: job.CreateIndex,
		Status: structs.DeploymentStatusRunning, TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 50}}}
	byID := func(a, b *structs.Allocation) int { return strings.Compare(a.ID, b.ID) }
	for round := range 200 {
		var allocs []*structs.Allocation
		for i := range r.IntN(50) {
			allocs = append(allocs, &structs.Allocation{ID: fmt.Sprintf("%08x", r.Uint32()), Name: structs.AllocName(job.ID, "web", i),
				JobID: job.ID, Job: job, TaskGroup: "web", NodeID: "n0", DesiredStatus: structs.AllocDesiredStatusRun,
				ClientStatus: structs.AllocClientStatusRunning})
		}
		slices.SortFunc(allocs, byID)
		allocs = slices.CompactFunc(allocs, func(a, b *structs.Allocation) bool { return a.ID == b.ID })
		m := &Memo{}
		ReconcileMemo(Input{Job: job, Allocs: allocs, Deployment: d, Nodes: []*structs.Node{testNode("n0", "ready")},
			IDs: func() string { return "x" }}, m)
		// The writes since: changes, deletes and new allocs.
		var drop []string
		var add, now []*structs.Allocation
		for _, a := range allocs {
			switch r.IntN(6) {
			case 0:
				drop = append(drop, a.ID) // gone
			case 1:
				c := a.Copy()
				drop, add, now = append(drop, a.ID), append(add, c), append(now, c)
			default:
				now = append(now, a)
			}
		}
		for range r.IntN(4) {
			a := &structs.Allocation{ID: fmt.Sprintf("%08x", r.Uint32()), JobID: job.ID, TaskGroup: "web"}
			if slices.ContainsFunc(now, func(b *structs.Allocation) bool { return b.ID == a.ID }) {
				continue
			}
			drop, add, now = append(drop, a.ID), append(add, a), append(now, a)
		}
		slices.SortFunc(now, byID)
		if got := m.AllocsWith(drop, add); !slices.Equal(got, now) {
			t.Fatalf("round %d: got %d allocs, want %d", round, len(got), len(now))
		}
	}
}
