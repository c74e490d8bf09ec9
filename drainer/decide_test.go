package drainer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// node returns a node; drain "" is none, else a deadline ("1h", "0" for
// none, "-1" forced) of a drain started at t0 + started.
func node(id, zone, drain string, started time.Duration, ignoreSystem bool) *structs.Node {
	n := &structs.Node{ID: id, Name: id, Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible,
		Meta: map[string]string{"zone": zone}}
	if drain == "" {
		return n
	}
	d := &structs.DrainStrategy{StartedAt: t0.Add(started), DrainSpec: structs.DrainSpec{IgnoreSystemJobs: ignoreSystem}}
	switch drain {
	case "-1":
		d.Deadline = -1
	default:
		dl, err := time.ParseDuration(drain)
		if err != nil {
			panic(err)
		}
		d.Deadline = dl
		if dl > 0 {
			d.ForceDeadline = d.StartedAt.Add(dl)
		}
	}
	n.DrainStrategy, n.Drain = d, true
	n.SchedulingEligibility = structs.NodeSchedulingIneligible
	return n
}

// job returns a job of one group "web" of count allocs; mp is its
// migrate.max_parallel (0: no migrate block, the default applies);
// budget, when not "", is a zone disruption budget over node.meta.zone.
func job(id, typ string, count, mp int, budget string) *structs.Job {
	tg := &structs.TaskGroup{Name: "web", Count: count}
	if mp > 0 {
		tg.Migrate = structs.DefaultMigrateStrategy()
		tg.Migrate.MaxParallel = mp
	}
	if budget != "" {
		a, err := structs.ParseAmount(budget)
		if err != nil {
			panic(err)
		}
		tg.Update = structs.DefaultUpdateStrategy()
		tg.Update.Zones = &structs.ZoneStrategy{Attribute: "${node.meta.zone}", Mode: structs.ZoneModeByZone, DisruptionBudget: &a}
	}
	return &structs.Job{ID: id, Namespace: structs.DefaultNamespace, Type: typ, Priority: 50, TaskGroups: []*structs.TaskGroup{tg}}
}

// alloc returns job's alloc at index idx on nodeID; flags: "migrate"
// (marked), "stopped" (desired stop), "complete" (finished on its
// client), "healthy".
func alloc(j *structs.Job, idx int, nodeID string, flags ...string) *structs.Allocation {
	a := &structs.Allocation{
		ID: fmt.Sprintf("%s.%d@%s", j.ID, idx, nodeID), Namespace: j.Namespace, JobID: j.ID, Job: j, TaskGroup: "web",
		Name: structs.AllocName(j.ID, "web", idx), NodeID: nodeID,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
	}
	yes := true
	for _, f := range flags {
		switch f {
		case "migrate":
			a.DesiredTransition.Migrate = &yes
		case "stopped":
			a.DesiredStatus = structs.AllocDesiredStatusStop
		case "complete":
			a.ClientStatus = structs.AllocClientStatusComplete
		case "healthy":
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &yes}
		default:
			panic(f)
		}
	}
	return a
}

// show prints a decision as a line per field.
func show(d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "migrate: %s\n", strings.Join(d.Migrate, " "))
	var evals []string
	for _, e := range d.Evals {
		evals = append(evals, e.ID)
	}
	fmt.Fprintf(&b, "evals: %s\n", strings.Join(evals, " "))
	var done []string
	for _, x := range d.Done {
		s := x.NodeID
		if x.Deadlined {
			s += "(deadline)"
		}
		done = append(done, s)
	}
	fmt.Fprintf(&b, "done: %s\n", strings.Join(done, " "))
	if !d.WakeAt.IsZero() {
		fmt.Fprintf(&b, "wake: +%s\n", d.WakeAt.Sub(t0))
	}
	return b.String()
}

func TestDecide(t *testing.T) {
	web := job("web", structs.JobTypeService, 4, 1, "")
	web2 := job("web", structs.JobTypeService, 4, 2, "")
	zoned := job("zoned", structs.JobTypeService, 6, 3, "1")
	sys := job("sys", structs.JobTypeSystem, 0, 0, "")
	bat := job("bat", structs.JobTypeBatch, 2, 0, "")
	for _, tc := range []struct {
		name    string
		now     time.Duration
		nodes   []*structs.Node
		jobs    []*structs.Job
		allocs  []*structs.Allocation
		pending []string
		latest  map[string]EvalMark
		want    string
	}{
		{
			name:  "max_parallel 1 across two draining nodes: the oldest drain's lowest index first",
			nodes: []*structs.Node{node("n1", "a", "1h", time.Second, false), node("n2", "a", "1h", 0, false), node("n3", "a", "", 0, false)},
			jobs:  []*structs.Job{web},
			allocs: []*structs.Allocation{alloc(web, 0, "n1"), alloc(web, 1, "n1"), alloc(web, 2, "n2"),
				alloc(web, 3, "n3")},
			want: "migrate: web.2@n2\nevals: web\ndone: \nwake: +1h0m0s\n",
		},
		{
			name:  "a move in flight on one node holds the group back on the other",
			nodes: []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "1h", 0, false), node("n3", "a", "", 0, false)},
			jobs:  []*structs.Job{web},
			allocs: []*structs.Allocation{alloc(web, 0, "n1"), alloc(web, 1, "n2", "migrate"), alloc(web, 1, "n3"),
				alloc(web, 3, "n3")},
			want: "migrate: \nevals: \ndone: \nwake: +1h0m0s\n",
		},
		{
			name:  "a move done (the old alloc stopped) frees the room",
			nodes: []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "1h", 0, false), node("n3", "a", "", 0, false)},
			jobs:  []*structs.Job{web},
			allocs: []*structs.Allocation{alloc(web, 0, "n1"), alloc(web, 1, "n2", "migrate", "stopped"), alloc(web, 1, "n3", "healthy"),
				alloc(web, 3, "n3")},
			want: "migrate: web.0@n1\nevals: web\ndone: n2\nwake: +1h0m0s\n",
		},
		{
			name:   "max_parallel 2 takes two at once",
			nodes:  []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "", 0, false)},
			jobs:   []*structs.Job{web2},
			allocs: []*structs.Allocation{alloc(web2, 0, "n1"), alloc(web2, 1, "n1"), alloc(web2, 2, "n1"), alloc(web2, 3, "n2")},
			want:   "migrate: web.0@n1 web.1@n1\nevals: web\ndone: \nwake: +1h0m0s\n",
		},
		{
			name: "a zone's disruption budget: one move per zone at once, whatever max_parallel",
			nodes: []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "1h", 0, false),
				node("n3", "b", "1h", 0, false), node("n4", "c", "", 0, false)},
			jobs: []*structs.Job{zoned},
			allocs: []*structs.Allocation{alloc(zoned, 0, "n1"), alloc(zoned, 1, "n1"), alloc(zoned, 2, "n2"),
				alloc(zoned, 3, "n3"), alloc(zoned, 4, "n3"), alloc(zoned, 5, "n4")},
			want: "migrate: zoned.0@n1 zoned.3@n3\nevals: zoned\ndone: \nwake: +1h0m0s\n",
		},
		{
			name: "a zone with a move in flight waits; another zone goes on",
			nodes: []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "1h", 0, false),
				node("n3", "b", "1h", 0, false), node("n4", "c", "", 0, false)},
			jobs: []*structs.Job{zoned},
			allocs: []*structs.Allocation{alloc(zoned, 0, "n1", "migrate"), alloc(zoned, 0, "n4"), alloc(zoned, 1, "n1"),
				alloc(zoned, 2, "n2"), alloc(zoned, 3, "n3"), alloc(zoned, 4, "n3"), alloc(zoned, 5, "n4")},
			want: "migrate: zoned.3@n3\nevals: zoned\ndone: \nwake: +1h0m0s\n",
		},
		{
			name:   "system allocs stay while anything else is left on the node",
			nodes:  []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "", 0, false)},
			jobs:   []*structs.Job{web, sys},
			allocs: []*structs.Allocation{alloc(web, 0, "n1"), alloc(sys, 0, "n1"), alloc(sys, 0, "n2")},
			want:   "migrate: web.0@n1\nevals: web\ndone: \nwake: +1h0m0s\n",
		},
		{
			name:   "system allocs go last, once the rest is gone",
			nodes:  []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "", 0, false)},
			jobs:   []*structs.Job{web, sys},
			allocs: []*structs.Allocation{alloc(web, 0, "n1", "migrate", "stopped"), alloc(sys, 0, "n1"), alloc(sys, 0, "n2")},
			want:   "migrate: sys.0@n1\nevals: sys\ndone: \nwake: +1h0m0s\n",
		},
		{
			name:   "ignoring system jobs: they stay, and the drain is complete without them",
			nodes:  []*structs.Node{node("n1", "a", "1h", 0, true)},
			jobs:   []*structs.Job{web, sys},
			allocs: []*structs.Allocation{alloc(web, 0, "n1", "migrate", "stopped"), alloc(sys, 0, "n1")},
			want:   "migrate: \nevals: \ndone: n1\nwake: +1h0m0s\n",
		},
		{
			name:   "batch allocs finish until the deadline",
			nodes:  []*structs.Node{node("n1", "a", "1h", 0, false)},
			jobs:   []*structs.Job{bat, sys},
			allocs: []*structs.Allocation{alloc(bat, 0, "n1"), alloc(bat, 1, "n1", "complete"), alloc(sys, 0, "n1")},
			now:    59 * time.Minute,
			want:   "migrate: \nevals: \ndone: \nwake: +1h0m0s\n",
		},
		{
			name:  "at the deadline everything left is marked, and jobs with marked allocs get a pass",
			nodes: []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "", 0, false)},
			jobs:  []*structs.Job{web2, bat, sys},
			allocs: []*structs.Allocation{alloc(bat, 0, "n1"), alloc(sys, 0, "n1"), alloc(web2, 0, "n1", "migrate"),
				alloc(web2, 0, "n2"), alloc(web2, 1, "n1"), alloc(web2, 2, "n1")},
			now:  time.Hour,
			want: "migrate: bat.0@n1 sys.0@n1 web.1@n1 web.2@n1\nevals: bat sys web\ndone: \n",
		},
		{
			name:    "past the deadline a job already waiting for a pass gets no other",
			nodes:   []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "", 0, false)},
			jobs:    []*structs.Job{web},
			allocs:  []*structs.Allocation{alloc(web, 0, "n1", "migrate"), alloc(web, 0, "n2")},
			pending: []string{"web"},
			now:     2 * time.Hour,
			want:    "migrate: \nevals: \ndone: \n",
		},
		{
			name:   "past the deadline a job evaluated since gets no other pass",
			nodes:  []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "", 0, false)},
			jobs:   []*structs.Job{web},
			allocs: []*structs.Allocation{alloc(web, 0, "n1", "migrate"), alloc(web, 0, "n2")},
			latest: map[string]EvalMark{"web": {CreateIndex: 50, CreateTime: t0.Add(time.Hour)}},
			now:    2 * time.Hour,
			want:   "migrate: \nevals: \ndone: \n",
		},
		{
			name:   "past the deadline a job last evaluated before it gets a pass",
			nodes:  []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "", 0, false)},
			jobs:   []*structs.Job{web},
			allocs: []*structs.Allocation{alloc(web, 0, "n1", "migrate"), alloc(web, 0, "n2")},
			latest: map[string]EvalMark{"web": {CreateIndex: 50, CreateTime: t0.Add(59 * time.Minute)}},
			now:    2 * time.Hour,
			want:   "migrate: \nevals: web\ndone: \n",
		},
		{
			name:   "a forced drain marks everything at once (system jobs ignored stay)",
			nodes:  []*structs.Node{node("n1", "a", "-1", 0, true), node("n2", "a", "", 0, false)},
			jobs:   []*structs.Job{web, bat, sys},
			allocs: []*structs.Allocation{alloc(web, 0, "n1"), alloc(web, 1, "n1"), alloc(bat, 0, "n1"), alloc(sys, 0, "n1")},
			want:   "migrate: bat.0@n1 web.0@n1 web.1@n1\nevals: bat web\ndone: \n",
		},
		{
			name:   "a drain with nothing left is complete; past its deadline it says so",
			nodes:  []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "30m", 0, false), node("n3", "a", "0", 0, false)},
			jobs:   []*structs.Job{web},
			allocs: []*structs.Allocation{alloc(web, 0, "n1", "complete"), alloc(web, 1, "n2", "migrate", "stopped")},
			now:    45 * time.Minute,
			want:   "migrate: \nevals: \ndone: n1 n2(deadline) n3\nwake: +1h0m0s\n",
		},
		{
			name:   "a marked alloc whose replacement is healthy gets a pass, unless one waits",
			nodes:  []*structs.Node{node("n1", "a", "0", 0, false), node("n2", "a", "", 0, false)},
			jobs:   []*structs.Job{web, web2},
			allocs: []*structs.Allocation{alloc(web, 0, "n1", "migrate"), alloc(web, 0, "n2", "healthy")},
			want:   "migrate: \nevals: web\ndone: \n",
		},
		{
			name:   "a replacement healthy before the job's latest pass needs no other",
			nodes:  []*structs.Node{node("n1", "a", "0", 0, false), node("n2", "a", "", 0, false)},
			jobs:   []*structs.Job{web},
			allocs: []*structs.Allocation{alloc(web, 0, "n1", "migrate"), alloc(web, 0, "n2", "healthy")},
			latest: map[string]EvalMark{"web": {CreateIndex: 50}},
			want:   "migrate: \nevals: \ndone: \n",
		},
		{
			name:  "migrate.max_parallel 0 moves nothing before the deadline, as Nomad's",
			nodes: []*structs.Node{node("n1", "a", "1h", 0, false), node("n2", "a", "", 0, false)},
			jobs: func() []*structs.Job {
				j := job("still", structs.JobTypeService, 2, 1, "")
				j.TaskGroups[0].Migrate.MaxParallel = 0
				return []*structs.Job{j}
			}(),
			allocs: func() []*structs.Allocation {
				j := job("still", structs.JobTypeService, 2, 1, "")
				return []*structs.Allocation{alloc(j, 0, "n1"), alloc(j, 1, "n2")}
			}(),
			want: "migrate: \nevals: \ndone: \nwake: +1h0m0s\n",
		},
		{
			name:  "a stopped job's allocs are marked without pacing",
			nodes: []*structs.Node{node("n1", "a", "1h", 0, false)},
			jobs: func() []*structs.Job {
				j := job("gone", structs.JobTypeService, 3, 1, "")
				j.Stop = true
				return []*structs.Job{j}
			}(),
			allocs: func() []*structs.Allocation {
				j := job("gone", structs.JobTypeService, 3, 1, "")
				return []*structs.Allocation{alloc(j, 0, "n1"), alloc(j, 1, "n1")}
			}(),
			want: "migrate: gone.0@n1 gone.1@n1\nevals: gone\ndone: \nwake: +1h0m0s\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pending := map[JobRef]bool{}
			for _, id := range tc.pending {
				pending[JobRef{structs.DefaultNamespace, id}] = true
			}
			latest := map[JobRef]EvalMark{}
			for id, m := range tc.latest {
				latest[JobRef{structs.DefaultNamespace, id}] = m
			}
			in := Input{Now: t0.Add(tc.now), Nodes: tc.nodes, Jobs: tc.jobs, Allocs: tc.allocs, Pending: pending, Latest: latest}
			got := show(Decide(in))
			if got != tc.want {
				t.Fatalf("got:\n%swant:\n%s", got, tc.want)
			}
			// The same input, in another order, decides the same.
			rev := in
			rev.Allocs = slices.Clone(in.Allocs)
			slices.Reverse(rev.Allocs)
			rev.Nodes = slices.Clone(in.Nodes)
			slices.Reverse(rev.Nodes)
			if again := show(Decide(rev)); again != got {
				t.Fatalf("order changed the decision:\n%s\n%s", got, again)
			}
		})
	}
}
