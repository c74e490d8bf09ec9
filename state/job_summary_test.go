package state

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// summaryWorld makes random writes to the jobs, allocations and
// evaluations that job summaries count.
type summaryWorld struct {
	t      *testing.T
	s      *Store
	r      *rand.Rand
	index  uint64
	nodes  []*structs.Node
	allocs []string
	evals  []string
	nextID int
}

// Jobs of the world: two services, a periodic parent and its children.
var summaryJobs = []string{"web", "api", "cron"}

func (w *summaryWorld) next() uint64 { w.index++; return w.index }

func (w *summaryWorld) at() int64 { return statetest.T0.UnixNano() + int64(w.index) }

func (w *summaryWorld) pick(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return ids[w.r.IntN(len(ids))]
}

// job returns a version of id: groups web (and, at random, db) for the
// services; the periodic parent runs nothing.
func (w *summaryWorld) job(id string) *structs.Job {
	j := statetest.Job(id, 1+w.r.IntN(3))
	if w.r.IntN(2) == 0 {
		db := j.TaskGroups[0].Copy()
		db.Name = "db"
		j.TaskGroups = append(j.TaskGroups, db)
	}
	if id == "cron" {
		j.Type = structs.JobTypeBatch
		j.Update = nil
		for _, tg := range j.TaskGroups {
			tg.Update = nil
		}
		j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "*/5 * * * *", SpecType: "cron"}
		if w.r.IntN(5) == 0 {
			j.Periodic = nil // no longer a parent
		}
	}
	return j
}

// stored returns the stored jobs, children included.
func (w *summaryWorld) stored() []*structs.Job {
	jobs, err := w.s.Snapshot().Jobs()
	must(w.t, err)
	return jobs
}

func (w *summaryWorld) newAlloc(job *structs.Job) *structs.Allocation {
	w.nextID++
	a := statetest.Alloc(job, w.nodes[w.r.IntN(len(w.nodes))], w.pick(w.evals), "", w.nextID)
	a.ID = statetest.ID(fmt.Sprintf("sum-alloc/%d", w.nextID))
	groups := []string{"web", "db", "gone"} // "gone": a group no version has
	a.TaskGroup = groups[w.r.IntN(len(groups))]
	w.allocs = append(w.allocs, a.ID)
	return a
}

func (w *summaryWorld) newEval(jobID string) *structs.Evaluation {
	w.nextID++
	e := statetest.Eval(fmt.Sprintf("sum-eval/%d", w.nextID), &structs.Job{Namespace: structs.DefaultNamespace, ID: jobID})
	w.queued(e)
	w.evals = append(w.evals, e.ID)
	return e
}

// queued sets e's queued counts at random: none, or some of its groups'.
func (w *summaryWorld) queued(e *structs.Evaluation) {
	e.QueuedAllocations = nil
	if w.r.IntN(3) > 0 {
		e.QueuedAllocations = map[string]int{"web": w.r.IntN(4)}
		if w.r.IntN(2) == 0 {
			e.QueuedAllocations["db"] = w.r.IntN(4)
		}
		e.Status = structs.EvalStatusComplete
	}
}

var clientStatuses = []string{
	structs.AllocClientStatusPending, structs.AllocClientStatusRunning, structs.AllocClientStatusComplete,
	structs.AllocClientStatusFailed, structs.AllocClientStatusLost, structs.AllocClientStatusUnknown,
}

// step makes one random write and returns its name.
func (w *summaryWorld) step() string {
	r := w.r
	switch op := r.IntN(14); op {
	case 0, 1:
		id := summaryJobs[r.IntN(len(summaryJobs))]
		_, err := w.s.RegisterJob(w.next(), &structs.JobRegisterRequest{Job: w.job(id), Eval: w.newEval(id), SubmitTime: w.at()})
		must(w.t, err)
		return "register"
	case 2:
		parent, err := w.s.Snapshot().JobByID("default", "cron")
		must(w.t, err)
		if parent == nil {
			return "nothing"
		}
		w.nextID++
		child := statetest.Job(fmt.Sprintf("cron/periodic-%d", w.nextID), 1)
		child.Type, child.Update, child.TaskGroups[0].Update = structs.JobTypeBatch, nil, nil
		child.ParentID = "cron"
		_, err = w.s.RegisterJob(w.next(), &structs.JobRegisterRequest{Job: child, Eval: w.newEval(child.ID), SubmitTime: w.at()})
		must(w.t, err)
		return "launch child"
	case 3, 4:
		jobs := w.stored()
		if len(jobs) == 0 {
			return "nothing"
		}
		job := jobs[r.IntN(len(jobs))]
		var placed []*structs.Allocation
		for range 1 + r.IntN(4) {
			placed = append(placed, w.newAlloc(job))
		}
		req := &structs.ApplyPlanResultsRequest{AllocsPlaced: placed, Job: job, UpdatedAt: w.at()}
		for _, id := range []string{w.pick(w.allocs), w.pick(w.allocs)} {
			if r.IntN(2) == 0 {
				req.AllocsStopped = append(req.AllocsStopped, &structs.AllocStopUpdate{AllocID: id, DesiredDescription: "replaced"})
			}
		}
		if r.IntN(4) == 0 {
			req.AllocsStopped = append(req.AllocsStopped, &structs.AllocStopUpdate{
				AllocID: w.pick(w.allocs), ClientStatus: structs.AllocClientStatusLost, DesiredDescription: "node lost"})
		}
		must(w.t, w.s.ApplyPlanResults(w.next(), req))
		return "plan"
	case 5, 6, 7:
		var reps []*structs.Allocation
		for range 1 + r.IntN(4) {
			reps = append(reps, &structs.Allocation{ID: w.pick(w.allocs), ClientStatus: clientStatuses[r.IntN(len(clientStatuses))]})
		}
		req := &structs.AllocClientUpdateRequest{Allocs: reps, UpdatedAt: w.at()}
		if r.IntN(4) == 0 {
			req.Evals = []*structs.Evaluation{w.newEval(summaryJobs[r.IntN(len(summaryJobs))])}
		}
		must(w.t, w.s.UpdateAllocsFromClient(w.next(), req))
		return "client status"
	case 8:
		// New and rewritten evaluations, several of one job in one write
		// (the same ModifyIndex: the lowest ID is shown).
		var evals []*structs.Evaluation
		for range 1 + r.IntN(3) {
			if r.IntN(2) == 0 && len(w.evals) > 0 {
				e, err := w.s.Snapshot().EvalByID(w.pick(w.evals))
				must(w.t, err)
				if e != nil {
					c := e.Copy()
					w.queued(c)
					evals = append(evals, c)
					continue
				}
			}
			evals = append(evals, w.newEval(summaryJobs[r.IntN(len(summaryJobs))]))
		}
		must(w.t, w.s.UpsertEvals(w.next(), evals))
		return "evals"
	case 9:
		req := &structs.EvalReapRequest{}
		for range r.IntN(3) {
			req.Evals = append(req.Evals, w.pick(w.evals))
		}
		for range r.IntN(4) {
			req.Allocs = append(req.Allocs, w.pick(w.allocs))
		}
		must(w.t, w.s.Reap(w.next(), req))
		return "reap"
	case 10:
		jobs := w.stored()
		if len(jobs) == 0 {
			return "nothing"
		}
		job := jobs[r.IntN(len(jobs))]
		purge := r.IntN(3) == 0
		_, err := w.s.DeregisterJob(w.next(), &structs.JobDeregisterRequest{
			Namespace: job.Namespace, JobID: job.ID, Purge: purge, SubmitTime: w.at(), Eval: w.newEval(job.ID)})
		must(w.t, err)
		if purge {
			return "purge"
		}
		return "stop"
	case 11:
		n := w.nodes[r.IntN(len(w.nodes))]
		status := structs.NodeStatusDown
		if r.IntN(2) == 0 {
			status = structs.NodeStatusReady
		}
		must(w.t, w.s.UpdateNodeStatus(w.next(), &structs.NodeUpdateStatusRequest{NodeID: n.ID, Status: status, UpdatedAt: w.at()}))
		return "node " + status
	case 12:
		// An in-place update: the job's latest version, another group.
		a, err := w.s.Snapshot().AllocByID(w.pick(w.allocs))
		must(w.t, err)
		if a == nil {
			return "nothing"
		}
		u := a.Copy()
		u.TaskGroup = []string{"web", "db"}[r.IntN(2)]
		must(w.t, w.s.ApplyPlanResults(w.next(), &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{u}, UpdatedAt: w.at()}))
		return "in place"
	default:
		// A report that changes no status: no summary may change.
		a, err := w.s.Snapshot().AllocByID(w.pick(w.allocs))
		must(w.t, err)
		if a == nil {
			return "nothing"
		}
		before, err := w.s.Snapshot().Index(TableJobSummary)
		must(w.t, err)
		rep := &structs.Allocation{ID: a.ID, ClientStatus: a.ClientStatus, ClientDescription: "again"}
		must(w.t, w.s.UpdateAllocsFromClient(w.next(), &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{rep}, UpdatedAt: w.at()}))
		after, err := w.s.Snapshot().Index(TableJobSummary)
		must(w.t, err)
		if after != before {
			w.t.Fatalf("a report repeating alloc %s's status rewrote a summary (index %d to %d)", a.ID, before, after)
		}
		return "repeated report"
	}
}

// checkSummaries fails unless every stored job's kept summary equals a
// recount (ModifyIndex aside) and no summary outlives its job.
func checkSummaries(t *testing.T, s *Store, step int, what string) {
	t.Helper()
	snap := s.Snapshot()
	jobs := get[[]*structs.Job](t)(snap.Jobs())
	sums := get[[]*structs.JobSummary](t)(snap.JobSummaries())
	if len(sums) != len(jobs) {
		t.Fatalf("step %d (%s): %d jobs, %d summaries", step, what, len(jobs), len(sums))
	}
	top := get[uint64](t)(snap.LatestIndex())
	for _, j := range jobs {
		got := get[*structs.JobSummary](t)(snap.JobSummaryByID(j.Namespace, j.ID))
		want := referenceSummary(t, snap, j)
		if re := get[*structs.JobSummary](t)(snap.RecountJobSummary(j.Namespace, j.ID)); !sameSummary(re, want) {
			t.Fatalf("step %d (%s): job %s: RecountJobSummary\n%s\nreference\n%s", step, what, j.ID, summaryText(re), summaryText(want))
		}
		if got == nil || !sameSummary(got, want) {
			t.Fatalf("step %d (%s): job %s: kept summary\n%+v %+v\nrecount\n%+v %+v", step, what, j.ID,
				summaryText(got), got, summaryText(want), want)
		}
		if got.ModifyIndex == 0 || got.ModifyIndex > top {
			t.Fatalf("step %d (%s): job %s: summary ModifyIndex %d, store at %d", step, what, j.ID, got.ModifyIndex, top)
		}
	}
}

// referenceSummary counts job's summary from everything, as GET
// /v1/jobs did before the store kept summaries: allocations by client
// status; Queued from the evaluation with queued counts and the highest
// ModifyIndex (the first by ID among equals) unless the job is stopped;
// children by status for a parent.
func referenceSummary(t *testing.T, snap *Snapshot, job *structs.Job) *structs.JobSummary {
	t.Helper()
	sum := &structs.JobSummary{JobID: job.ID, Namespace: job.Namespace, CreateIndex: job.CreateIndex,
		Summary: map[string]structs.TaskGroupSummary{}, Children: &structs.JobChildrenSummary{}}
	for _, tg := range job.TaskGroups {
		sum.Summary[tg.Name] = structs.TaskGroupSummary{}
	}
	for _, a := range get[[]*structs.Allocation](t)(snap.AllocsByJob(job.Namespace, job.ID)) {
		g := sum.Summary[a.TaskGroup]
		switch a.ClientStatus {
		case structs.AllocClientStatusRunning:
			g.Running++
		case structs.AllocClientStatusComplete:
			g.Complete++
		case structs.AllocClientStatusFailed:
			g.Failed++
		case structs.AllocClientStatusLost:
			g.Lost++
		case structs.AllocClientStatusUnknown:
			g.Unknown++
		default:
			g.Starting++
		}
		sum.Summary[a.TaskGroup] = g
	}
	var latest *structs.Evaluation
	for _, e := range get[[]*structs.Evaluation](t)(snap.EvalsByJob(job.Namespace, job.ID)) {
		if e.QueuedAllocations != nil && (latest == nil || e.ModifyIndex > latest.ModifyIndex) {
			latest = e
		}
	}
	if latest != nil && !job.Stop {
		for tg, n := range latest.QueuedAllocations {
			if g, ok := sum.Summary[tg]; ok {
				g.Queued = n
				sum.Summary[tg] = g
			}
		}
	}
	if job.IsParent() {
		all := get[[]*structs.Job](t)(snap.Jobs())
		for _, c := range all {
			if c.Namespace != job.Namespace || c.ParentID != job.ID {
				continue
			}
			switch c.Status {
			case structs.JobStatusRunning:
				sum.Children.Running++
			case structs.JobStatusDead:
				sum.Children.Dead++
			default:
				sum.Children.Pending++
			}
		}
	}
	return sum
}

func summaryText(s *structs.JobSummary) string {
	if s == nil {
		return "<nil>"
	}
	out := ""
	for _, g := range slices.Sorted(maps.Keys(s.Summary)) {
		out += fmt.Sprintf("%s=%+v ", g, s.Summary[g])
	}
	return out + fmt.Sprintf("children=%+v", *s.Children)
}

// TestJobSummariesMatchRecount drives random histories of job versions
// (groups added and removed, stopped, purged and registered again, a
// periodic parent that stops being one), child launches, plans (placements,
// stops, lost allocations, in-place group moves), client reports of every
// status, node status changes, evaluations new and rewritten (several per
// write) and garbage collection, and checks after each write that every
// job's kept summary equals a recount. Every few writes it also checks that
// a restore, from the kept rows or without them (an older snapshot), gives
// the same summaries.
func TestJobSummariesMatchRecount(t *testing.T) {
	runs, steps := 30, 300
	if testing.Short() {
		runs = 8
	}
	for run := range runs {
		s := newStore(t)
		w := &summaryWorld{t: t, s: s, r: rand.New(rand.NewPCG(uint64(run), 37))}
		for _, name := range []string{"a", "b"} {
			n := statetest.Node(name)
			must(t, s.UpsertNode(w.next(), n))
			w.nodes = append(w.nodes, n)
		}
		seen := map[string]int{}
		for i := range steps {
			what := w.step()
			seen[what]++
			checkSummaries(t, s, i, what)
			if i%50 == 49 {
				checkSummaryRestore(t, s)
			}
		}
		if run == 0 {
			t.Logf("writes of run 0: %v", seen)
		}
	}
}

// checkSummaryRestore restores s twice, with its summary rows and without
// them, and checks that both stores keep the same summaries (the first
// with the same ModifyIndex) and go on keeping them.
func checkSummaryRestore(t *testing.T, s *Store) {
	t.Helper()
	rows := func(st *Store) string {
		var out []any
		for _, table := range []string{TableJobSummary, TableJobSummaryBasis} {
			must(t, st.Snapshot().Each(table, func(obj any) error { out = append(out, obj); return nil }))
		}
		b, err := json.Marshal(out)
		must(t, err)
		return string(b)
	}
	same := restoredCopy(t, s)
	if a, b := rows(s), rows(same); a != b {
		t.Fatalf("a store restored with its summaries keeps others:\n%s\n%s", a, b)
	}
	old := newStore(t)
	r := old.Restorer()
	snap := s.Snapshot()
	for _, table := range Tables {
		if table == TableJobSummary || table == TableJobSummaryBasis {
			continue
		}
		must(t, snap.Each(table, func(obj any) error { return r.Insert(table, obj) }))
	}
	r.Commit()
	checkSummaries(t, old, -1, "restored without summaries")
	basis := func(st *Store) []*JobSummaryBasis {
		return get[[]*JobSummaryBasis](t)(list[*JobSummaryBasis](st.Snapshot(), TableJobSummaryBasis, "id"))
	}
	if a, b := basis(s), basis(old); !slices.EqualFunc(a, b, func(x, y *JobSummaryBasis) bool { return *x == *y }) {
		t.Fatalf("bases recounted on restore differ:\n%+v\n%+v", a, b)
	}
}

// TestJobSummaryQueriesWakeOnSummaryChanges: a query that reads the
// summaries wakes when an allocation's status changes, and sleeps through
// a report that changes none and through a newer evaluation with the same
// queued counts.
func TestJobSummaryQueriesWakeOnSummaryChanges(t *testing.T) {
	s := newStore(t)
	n := statetest.Node("a")
	must(t, s.UpsertNode(1, n))
	job := registerJob(t, s, 2, statetest.Job("web", 2))
	a := statetest.Alloc(job, n, "e", "", 0)
	must(t, s.ApplyPlanResults(3, &structs.ApplyPlanResultsRequest{AllocsPlaced: []*structs.Allocation{a}, Job: job}))
	e := statetest.Eval("queued-1", job)
	e.Status, e.QueuedAllocations = structs.EvalStatusComplete, map[string]int{"web": 1}
	must(t, s.UpsertEvals(4, []*structs.Evaluation{e}))

	watch := func() memdb.WatchSet {
		ws := memdb.NewWatchSet()
		snap := s.Snapshot().WithWatch(ws)
		get[[]*structs.JobSummary](t)(snap.JobSummaries())
		get[uint64](t)(snap.Index(TableJobSummary))
		return ws
	}
	fired := func(ws memdb.WatchSet) bool {
		for ch := range ws {
			select {
			case <-ch:
				return true
			default:
			}
		}
		return false
	}
	ws := watch()
	must(t, s.UpdateAllocsFromClient(5, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{
		{ID: a.ID, ClientStatus: structs.AllocClientStatusPending, ClientDescription: "still starting"}}}))
	e2 := statetest.Eval("queued-2", job)
	e2.Status, e2.QueuedAllocations = structs.EvalStatusComplete, map[string]int{"web": 1}
	must(t, s.UpsertEvals(6, []*structs.Evaluation{e2}))
	if fired(ws) {
		t.Fatal("a report and an evaluation that change no summary woke the query")
	}
	must(t, s.UpdateAllocsFromClient(7, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{
		{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning}}}))
	if !fired(ws) {
		t.Fatal("an allocation now running did not wake the query")
	}
	sum := get[*structs.JobSummary](t)(s.Snapshot().JobSummaryByID("default", "web"))
	if want := (structs.TaskGroupSummary{Queued: 1, Running: 1}); sum.Summary["web"] != want || sum.ModifyIndex != 7 {
		t.Fatalf("summary %+v at %d, want %+v at 7", sum.Summary, sum.ModifyIndex, want)
	}
}
