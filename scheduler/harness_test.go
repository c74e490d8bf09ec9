package scheduler

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/droverhq/drover/structs"
)

// The scenario language of testdata/reconcile:
//
//	job [id=example] [type=service] [version=N] [stop]   (body: one group per line)
//	  web count=3 [max_parallel=1|25%] [canary=N] [auto_promote] [auto_revert] [stagger=30s]
//	      [max_surge=N|N%] [first_batch=N|N%] [unhealthy_first] [max_unhealthy=N|N%] [max_failed=N|N%]
//	      [on_failure=fail|pause|revert] [checkpoints=N|N%,...] [analysis=each_batch|canary|background]
//	      [config=v1] [meta=x] [resched=attempts/interval/delay/function/max_delay|unlimited/delay/function/max_delay|none]
//	job ... [revert_of=N]                                 (the version a revert registered)
//	job ... [group_order=db,api]                          (job-level update: groups one at a time)
//	job ... [regions=east,west region=west [region_parallel=N]]   (a multi-region job's copy in region)
//	  web ... [zone_attr=meta.zone] [zone_mode=concurrent] [zone_order=b,a] [zone_budget=N|N%] [zone_threshold=N%]
//	nodes                                                (body: "<id> ready|down|drain|ineligible [zone=a] [deadline=1h|-1|0]")
//	                                                     (drain: started at baseTime, deadline 1h unless set; -1 forces, 0 none)
//	allocs <group> count=N [version=V] [nodes=n1,n2] [client=running] [health=healthy] [deployment=D] [canary] [from=I]
//	alloc <group>[i] [id=..] [node=..] [version=V] [client=..] [desired=..] [health=..] [deployment=D]
//	      [canary] [finished=30s] [reschedule] [force] [migrate] [events=0s:5s,...] [followup=E] [next=A]
//	      [health_at=20s]                                  (also on allocs: when health was set)
//	deployment id=D version=V [status=running] [group=web] [total=N] [canaries=N] [promoted] [checkpoints_reached=N]
//	           [restart=inplace|reschedule [batch_size=N|N%] [wait_ask]]  (a job restart, created at index 100)
//	           [zones=a:rolling:2[:failed],b:waiting:3]
//	           [live_healthy=N] [runs=successful:2,running:4]      (analysis "errors": each_batch runs)
//	           [groups=db:2:done,api:2:rolling]              (several groups: name:total:state, Order in that order)
//	clear                                                (drops all allocs)
//	reconcile [now=90s]
//	rollout-plan                                         (PlanRollout: the batches, one per line)
//
// Times are offsets from baseTime. Printed IDs are id1, id2, ... in order.

var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type scenario struct {
	versions   map[uint64]*structs.Job
	job        *structs.Job
	nodes      []*structs.Node
	allocs     []*structs.Allocation
	deployment *structs.Deployment
}

func newScenario() *scenario {
	return &scenario{versions: map[uint64]*structs.Job{}}
}

func kv(tokens []string) map[string]string {
	m := map[string]string{}
	for _, t := range tokens {
		k, v, _ := strings.Cut(t, "=")
		m[k] = v
	}
	return m
}

func cmdArgs(td *datadriven.TestData) map[string]string {
	m := map[string]string{}
	for _, a := range td.CmdArgs {
		m[a.Key] = strings.Join(a.Vals, ",")
	}
	return m
}

func atoi(t testing.TB, s string, def int) int {
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("bad number %q: %v", s, err)
	}
	return n
}

func dur(t testing.TB, s string) time.Duration {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("bad duration %q: %v", s, err)
	}
	return d
}

func (s *scenario) run(t testing.TB, td *datadriven.TestData) string {
	args := cmdArgs(td)
	switch td.Cmd {
	case "job":
		s.buildJob(t, args, td.Input)
		return "ok"
	case "nodes":
		s.nodes = nil
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				t.Fatalf("bad node line %q", line)
			}
			n := testNode(f[0], f[1])
			opts := kv(f[2:])
			if z := opts["zone"]; z != "" {
				n.Meta = map[string]string{"zone": z}
			}
			if d, ok := opts["deadline"]; ok && n.DrainStrategy != nil {
				if d == "-1" {
					n.DrainStrategy.Deadline = -1
				} else {
					n.DrainStrategy.Deadline = dur(t, d)
				}
				n.DrainStrategy.ForceDeadline = time.Time{}
				if n.DrainStrategy.Deadline > 0 {
					n.DrainStrategy.ForceDeadline = baseTime.Add(n.DrainStrategy.Deadline)
				}
			}
			s.nodes = append(s.nodes, n)
		}
		return "ok"
	case "allocs":
		group := td.CmdArgs[0].Key
		n := atoi(t, args["count"], 1)
		from := atoi(t, args["from"], 0)
		nodes := strings.Split(args["nodes"], ",")
		if args["nodes"] == "" {
			nodes = []string{"n1"}
		}
		for i := from; i < from+n; i++ {
			m := map[string]string{}
			for k, v := range args {
				m[k] = v
			}
			m["node"] = nodes[(i-from)%len(nodes)]
			s.addAlloc(t, fmt.Sprintf("%s[%d]", group, i), m)
		}
		return "ok"
	case "alloc":
		s.addAlloc(t, td.CmdArgs[0].Key, args)
		return "ok"
	case "clear":
		s.allocs = nil
		return "ok"
	case "deployment":
		s.deployment = testDeployment(t, args)
		return "ok"
	case "reconcile":
		n := 0
		in := Input{
			Job: s.job, JobID: "example", Allocs: s.allocs, Deployment: s.deployment,
			Nodes: s.nodes, Now: baseTime.Add(dur(t, args["now"])),
			IDs:    func() string { n++; return fmt.Sprintf("id%d", n) },
			EvalID: "eval", EvalPriority: 50,
		}
		p := Reconcile(in)
		if err := checkPlan(in, p); err != nil {
			t.Errorf("invariant: %v", err)
		}
		return p.String()
	case "rollout-plan":
		in := Input{Job: s.job, JobID: "example", Allocs: s.allocs, Deployment: s.deployment,
			Nodes: s.nodes, Now: baseTime, EvalID: "eval", EvalPriority: 50}
		var b strings.Builder
		for _, bt := range PlanRollout(in) {
			fmt.Fprintf(&b, "%s batch %d", bt.Group, bt.Batch)
			if bt.Zone != "" {
				fmt.Fprintf(&b, " zone=%s", bt.Zone)
			}
			fmt.Fprintf(&b, " %s", strings.Join(bt.Allocs, ","))
			if bt.Surge {
				b.WriteString(" surge")
			}
			if bt.PauseAfter != "" {
				fmt.Fprintf(&b, " pause-after=%s", bt.PauseAfter)
			}
			b.WriteByte('\n')
		}
		if b.Len() == 0 {
			return "no batches\n"
		}
		return b.String()
	}
	t.Fatalf("unknown command %q", td.Cmd)
	return ""
}

func (s *scenario) buildJob(t testing.TB, args map[string]string, body string) {
	id := args["id"]
	if id == "" {
		id = "example"
	}
	typ := args["type"]
	if typ == "" {
		typ = structs.JobTypeService
	}
	v := uint64(atoi(t, args["version"], 0))
	j := &structs.Job{
		ID: id, Name: id, Namespace: structs.DefaultNamespace, Type: typ, Priority: 50,
		Datacenters: []string{"dc1"}, Version: v, CreateIndex: 1, JobModifyIndex: 10 + v, ModifyIndex: 10 + v,
	}
	_, j.Stop = args["stop"]
	if o := args["group_order"]; o != "" {
		j.Update = structs.DefaultUpdateStrategy()
		j.Update.GroupOrder = strings.Split(o, ",")
	}
	if rv, ok := args["revert_of"]; ok {
		v := uint64(atoi(t, rv, 0))
		j.RevertOf = &v
	}
	if rs := args["regions"]; rs != "" {
		// A multi-region job (scheduler/multiregion.go) seen in region=.
		j.Region = args["region"]
		j.Multiregion = &structs.Multiregion{Strategy: &structs.MultiregionStrategy{
			MaxParallel: atoi(t, args["region_parallel"], 0)}}
		for _, name := range strings.Split(rs, ",") {
			j.Multiregion.Regions = append(j.Multiregion.Regions, &structs.MultiregionRegion{Name: name, Count: 1})
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		g := kv(f[1:])
		tg := &structs.TaskGroup{
			Name:  f[0],
			Count: atoi(t, g["count"], 1),
			Tasks: []*structs.Task{{
				Name: "main", Driver: structs.DriverMock,
				Config:    map[string]any{"v": g["config"]},
				Resources: &structs.Resources{CPU: 100, MemoryMB: 128},
			}},
			EphemeralDisk:    &structs.EphemeralDisk{SizeMB: 100},
			ReschedulePolicy: structs.DefaultReschedulePolicy(typ),
			Meta:             map[string]string{"m": g["meta"]},
		}
		if !structs.RunsToCompletion(typ) {
			u := structs.DefaultUpdateStrategy()
			if mp := g["max_parallel"]; strings.HasSuffix(mp, "%") {
				p := amount(t, mp).Value
				u.MaxParallelPercent = &p
				u.MaxParallel = u.ParallelFor(atoi(t, g["count"], 1))
			} else {
				u.MaxParallel = atoi(t, mp, 1)
			}
			for k, f := range map[string]**structs.Amount{
				"max_surge": &u.MaxSurge, "first_batch": &u.FirstBatch,
				"max_unhealthy": &u.MaxUnhealthy, "max_failed": &u.MaxFailed,
			} {
				if v, ok := g[k]; ok {
					a := amount(t, v)
					*f = &a
				}
			}
			_, u.UnhealthyFirst = g["unhealthy_first"]
			u.OnFailure = g["on_failure"]
			if za := g["zone_attr"]; za != "" {
				u.Zones = &structs.ZoneStrategy{Attribute: "${" + za + "}", Mode: structs.ZoneModeByZone}
				if m := g["zone_mode"]; m != "" {
					u.Zones.Mode = m
				}
				if o := g["zone_order"]; o != "" {
					u.Zones.Order = strings.Split(o, ",")
				}
				if b := g["zone_budget"]; b != "" {
					a := amount(t, b)
					u.Zones.DisruptionBudget = &a
				}
				if th := g["zone_threshold"]; th != "" {
					a := amount(t, th)
					u.Zones.SuccessThreshold = &a
				}
			}
			if cps := g["checkpoints"]; cps != "" {
				for _, c := range strings.Split(cps, ",") {
					u.Checkpoints = append(u.Checkpoints, amount(t, c))
				}
			}
			if w := g["analysis"]; w != "" {
				// One analysis "errors" run at that moment (part E).
				u.Analyses = []*structs.Analysis{{Name: "errors", When: w, Count: 1}}
			}
			u.Canary = atoi(t, g["canary"], 0)
			_, u.AutoPromote = g["auto_promote"]
			_, u.AutoRevert = g["auto_revert"]
			if st, ok := g["stagger"]; ok {
				u.Stagger, u.StaggerSet = dur(t, st), true
			}
			tg.Update = u
		}
		if r, ok := g["resched"]; ok {
			tg.ReschedulePolicy = testResched(t, r)
		}
		j.TaskGroups = append(j.TaskGroups, tg)
	}
	s.versions[v] = j
	s.job = j
}

// testZones reads "a:rolling:2[:failed],b:waiting:3".
func testZones(t testing.TB, s string) []*structs.ZoneState {
	if s == "" {
		return nil
	}
	var out []*structs.ZoneState
	for _, z := range strings.Split(s, ",") {
		p := strings.Split(z, ":")
		if len(p) < 3 {
			t.Fatalf("zone %q wants name:state:size[:failed]", z)
		}
		zs := &structs.ZoneState{Name: p[0], State: p[1], Size: atoi(t, p[2], 0)}
		if len(p) > 3 {
			zs.Failed = atoi(t, p[3], 0)
		}
		out = append(out, zs)
	}
	return out
}

func amount(t testing.TB, s string) structs.Amount {
	a, err := structs.ParseAmount(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func testResched(t testing.TB, s string) *structs.ReschedulePolicy {
	if s == "none" {
		return nil
	}
	p := strings.Split(s, "/")
	if len(p) != 5 {
		t.Fatalf("resched wants 5 parts, got %q", s)
	}
	r := &structs.ReschedulePolicy{Delay: dur(t, p[2]), DelayFunction: p[3], MaxDelay: dur(t, p[4])}
	if p[0] == "unlimited" {
		r.Unlimited = true
	} else {
		r.Attempts = atoi(t, p[0], 0)
		r.Interval = dur(t, p[1])
	}
	return r
}

func testNode(id, status string) *structs.Node {
	n := &structs.Node{
		ID: id, Name: id, Datacenter: "dc1", NodePool: structs.DefaultNodePool,
		Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible,
		Attributes: map[string]string{"kernel.name": "linux"},
		NodeResources: &structs.NodeResources{
			Cpu: structs.NodeCpuResources{CpuShares: 4000}, Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk: structs.NodeDiskResources{DiskMB: 100000},
		},
		Drivers: map[string]*structs.DriverInfo{structs.DriverMock: {Detected: true, Healthy: true}},
	}
	switch status {
	case "down":
		n.Status = structs.NodeStatusDown
	case "drain":
		n.Drain = true
		n.SchedulingEligibility = structs.NodeSchedulingIneligible
		n.DrainStrategy = &structs.DrainStrategy{
			DrainSpec: structs.DrainSpec{Deadline: time.Hour}, StartedAt: baseTime, ForceDeadline: baseTime.Add(time.Hour),
		}
	case "ineligible":
		n.SchedulingEligibility = structs.NodeSchedulingIneligible
	}
	return n
}

func (s *scenario) addAlloc(t testing.TB, name string, m map[string]string) {
	group, rest, ok := strings.Cut(name, "[")
	if !ok {
		t.Fatalf("alloc name %q wants group[index]", name)
	}
	idx := strings.TrimSuffix(rest, "]")
	v := uint64(atoi(t, m["version"], 0))
	job := s.versions[v]
	if job == nil {
		t.Fatalf("no job version %d", v)
	}
	id := m["id"]
	if id == "" {
		id = fmt.Sprintf("%s%sv%d", group, idx, v)
	}
	a := &structs.Allocation{
		ID: id, Namespace: job.Namespace, Name: fmt.Sprintf("%s.%s[%s]", job.ID, group, idx),
		NodeID: m["node"], NodeName: m["node"], JobID: job.ID, Job: job, TaskGroup: group,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
		DeploymentID: m["deployment"], FollowupEvalID: m["followup"], NextAllocation: m["next"], Zone: m["zone"],
		ModifyTime: baseTime.UnixNano(),
	}
	if a.NodeID == "" {
		a.NodeID, a.NodeName = "n1", "n1"
	}
	if c := m["client"]; c != "" {
		a.ClientStatus = c
	}
	if d := m["desired"]; d != "" {
		a.DesiredStatus = d
	}
	_, canary := m["canary"]
	if h := m["health"]; h != "" || canary {
		a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: canary}
		if h != "" {
			b := h == "healthy"
			a.DeploymentStatus.Healthy = &b
		}
		if at, ok := m["health_at"]; ok {
			a.DeploymentStatus.Timestamp = baseTime.Add(dur(t, at))
		}
	}
	if f, ok := m["finished"]; ok {
		a.TaskStates = map[string]*structs.TaskState{"main": {State: structs.TaskStateDead, Failed: true, FinishedAt: baseTime.Add(dur(t, f))}}
	}
	yes := true
	if _, ok := m["reschedule"]; ok {
		a.DesiredTransition.Reschedule = &yes
	}
	if _, ok := m["force"]; ok {
		a.DesiredTransition.ForceReschedule = &yes
	}
	if _, ok := m["migrate"]; ok {
		a.DesiredTransition.Migrate = &yes
	}
	if ev := m["events"]; ev != "" {
		a.RescheduleTracker = &structs.RescheduleTracker{}
		for _, e := range strings.Split(ev, ",") {
			at, d, _ := strings.Cut(e, ":")
			a.RescheduleTracker.Events = append(a.RescheduleTracker.Events, &structs.RescheduleEvent{
				RescheduleTime: baseTime.Add(dur(t, at)).UnixNano(), Delay: dur(t, d), PrevAllocID: "older",
			})
		}
	}
	s.allocs = append(s.allocs, a)
}

func testDeployment(t testing.TB, m map[string]string) *structs.Deployment {
	v := uint64(atoi(t, m["version"], 0))
	status := m["status"]
	if status == "" {
		status = structs.DeploymentStatusRunning
	}
	group := m["group"]
	if group == "" {
		group = "web"
	}
	_, promoted := m["promoted"]
	if kind, ok := m["restart"]; ok {
		// A job restart: created at index 100 (after every test alloc),
		// with no group states until a pass adds them, unless total= says
		// the group joined.
		spec := &structs.RestartSpec{Groups: strings.Split(group, "+"), Reschedule: kind == "reschedule"}
		if b := m["batch_size"]; b != "" {
			a, err := structs.ParseAmount(b)
			if err != nil {
				t.Fatal(err)
			}
			spec.BatchSize = &a
		}
		_, spec.BatchWaitAsk = m["wait_ask"]
		d := &structs.Deployment{ID: m["id"], Namespace: structs.DefaultNamespace, JobID: "example", JobVersion: v, JobCreateIndex: 1,
			Status: status, CreateIndex: 100, Restart: spec, TaskGroups: map[string]*structs.DeploymentState{}}
		if _, ok := m["total"]; ok {
			d.TaskGroups[group] = &structs.DeploymentState{DesiredTotal: atoi(t, m["total"], 0),
				CheckpointsReached: atoi(t, m["checkpoints_reached"], 0), Zones: testZones(t, m["zones"])}
		}
		return d
	}
	if gs := m["groups"]; gs != "" {
		d := &structs.Deployment{ID: m["id"], Namespace: structs.DefaultNamespace, JobID: "example", JobVersion: v, JobCreateIndex: 1,
			Status: status, TaskGroups: map[string]*structs.DeploymentState{}}
		for i, g := range strings.Split(gs, ",") {
			p := strings.Split(g, ":")
			if len(p) != 3 {
				t.Fatalf("group %q wants name:total:state", g)
			}
			d.TaskGroups[p[0]] = &structs.DeploymentState{DesiredTotal: atoi(t, p[1], 0), Order: i + 1, State: p[2]}
		}
		return d
	}
	return &structs.Deployment{
		ID: m["id"], Namespace: structs.DefaultNamespace, JobID: "example", JobVersion: v, JobCreateIndex: 1,
		Status: status,
		TaskGroups: map[string]*structs.DeploymentState{group: {
			DesiredTotal: atoi(t, m["total"], 0), DesiredCanaries: atoi(t, m["canaries"], 0), Promoted: promoted,
			CheckpointsReached: atoi(t, m["checkpoints_reached"], 0),
			Zones:              testZones(t, m["zones"]),
			LiveHealthyAllocs:  atoi(t, m["live_healthy"], 0),
			Analyses:           testRuns(t, m["runs"]),
		}},
	}
}

// testRuns reads each_batch runs of the analysis "errors":
// "successful:2,running:4" (phase, and the healthy allocs each covers).
func testRuns(t testing.TB, s string) []*structs.AnalysisRun {
	if s == "" {
		return nil
	}
	var out []*structs.AnalysisRun
	for i, r := range strings.Split(s, ",") {
		phase, healthy, ok := strings.Cut(r, ":")
		if !ok {
			t.Fatalf("run %q wants phase:healthy", r)
		}
		out = append(out, &structs.AnalysisRun{Name: "errors", When: structs.AnalysisWhenEachBatch, Batch: i + 1,
			Phase: phase, Healthy: atoi(t, healthy, 0)})
	}
	return out
}

func TestReconcileScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/reconcile", func(t *testing.T, path string) {
		s := newScenario()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return s.run(t, td)
		})
	})
}
