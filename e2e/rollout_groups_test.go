package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// The group order tests roll a job of three groups, db (1 alloc), api (2)
// and web (2), whose job-level update block has group_order = ["db",
// "api"] and pause_between_groups (website/rollouts.md, Groups one at a
// time): db rolls, then api, then web, the group it does not name. They
// look at the rollout through the HTTP API: each new alloc's group, when
// it was created and when it turned healthy, and the deployment's
// TaskGroups.<group> Order and State and its description, sampled while
// it runs.

// rolloutGroups are the test job's groups in the order the job file
// declares them, with their counts.
var rolloutGroups = []struct {
	name  string
	count int
}{{"web", 2}, {"api", 2}, {"db", 1}}

// groupOrder is the order the groups roll in: group_order's db and api,
// then web.
var groupOrder = []string{"db", "api", "web"}

// groupsSpec is a version of the three-group job.
type groupsSpec struct {
	ID, Version string
	// Order is group_order's list.
	Order []string
	// Pause is pause_between_groups; MinHealthy is min_healthy_time.
	Pause, MinHealthy string
}

func (s groupsSpec) hcl() string {
	var b strings.Builder
	quoted := make([]string, len(s.Order))
	for i, g := range s.Order {
		quoted[i] = fmt.Sprintf("%q", g)
	}
	fmt.Fprintf(&b, `job %q {
  type = "service"
  update {
    group_order          = [%s]
    pause_between_groups = %q
    max_parallel         = 1
    health_check         = "task_states"
    min_healthy_time     = %q
    healthy_deadline     = "30s"
    progress_deadline    = "2m"
  }
`, s.ID, strings.Join(quoted, ", "), s.Pause, s.MinHealthy)
	for _, g := range rolloutGroups {
		fmt.Fprintf(&b, `  group %q {
    count = %d
    reschedule {
      attempts  = 0
      unlimited = false
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec sleep 600"]
      }
      env {
        VERSION = %q
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
`, g.name, g.count, s.Version)
	}
	b.WriteString("}\n")
	return b.String()
}

// job parses the spec as `drover job run` would.
func (s groupsSpec) job(t testing.TB) *structs.Job {
	t.Helper()
	job, _, err := jobspec.Parse(s.ID+".hcl", []byte(s.hcl()), jobspec.Options{})
	if err != nil {
		t.Fatalf("parsing %s:\n%s\n%v", s.ID, s.hcl(), err)
	}
	if !slices.Equal(job.GroupRolloutOrder(), groupOrder) {
		t.Fatalf("%s parses to the group rollout order %v, want %v (update %s)",
			s.ID, job.GroupRolloutOrder(), groupOrder, jsonString(job.Update))
	}
	return job
}

// firstGroupsVersion registers s's first version, waits for it to roll
// out, and returns its second.
func firstGroupsVersion(t testing.TB, c *apiclient.Client, s groupsSpec) groupsSpec {
	t.Helper()
	stopJobProcs(t, c, s.ID)
	registerJob(t, c, s.job(t))
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	s.Version = "2"
	return s
}

// groupStates renders a deployment's groups in Order as "name order
// state" items.
func groupStates(d *structs.Deployment) string {
	type row struct {
		name  string
		order int
		state string
	}
	var rows []row
	for name, s := range d.TaskGroups {
		if s != nil {
			rows = append(rows, row{name, s.Order, s.State})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].order != rows[j].order {
			return rows[i].order < rows[j].order
		}
		return rows[i].name < rows[j].name
	})
	var b []string
	for _, r := range rows {
		b = append(b, fmt.Sprintf("%s %d %s", r.name, r.order, r.state))
	}
	return strings.Join(b, ", ")
}

// doneGroups is groupStates of a finished rollout of the groups in
// groupOrder.
func doneGroups() string {
	var b []string
	for i, g := range groupOrder {
		b = append(b, fmt.Sprintf("%s %d %s", g, i+1, structs.GroupStateDone))
	}
	return strings.Join(b, ", ")
}

// groupAlloc is what the group checks need of one alloc.
type groupAlloc struct {
	Name, Group      string
	CreateIndex      uint64
	Created, Healthy time.Time // Healthy: zero unless healthy
}

func (a groupAlloc) String() string {
	h := "-"
	if !a.Healthy.IsZero() {
		h = a.Healthy.Format("15:04:05.000")
	}
	return fmt.Sprintf("%s index %d created %s healthy %s", a.Name, a.CreateIndex, a.Created.Format("15:04:05.000"), h)
}

// groupAllocs lists the job's allocs of version by group.
func groupAllocs(t testing.TB, c *apiclient.Client, jobID string, version uint64) map[string][]groupAlloc {
	t.Helper()
	out := map[string][]groupAlloc{}
	for _, a := range allocsOf(t, c, jobID) {
		if a.JobVersion != version {
			continue
		}
		ga := groupAlloc{Name: a.Name, Group: a.TaskGroup, CreateIndex: a.CreateIndex, Created: time.Unix(0, a.CreateTime)}
		if healthy(a) {
			ga.Healthy = a.DeploymentStatus.Timestamp
		}
		out[a.TaskGroup] = append(out[a.TaskGroup], ga)
	}
	return out
}

// checkGroupTurns checks a finished rollout's new allocs: each group has
// its count, all healthy, and every alloc of a group was created after
// every alloc of the group before it in groupOrder was healthy, and at
// least pause later.
func checkGroupTurns(t testing.TB, c *apiclient.Client, jobID string, version uint64, pause time.Duration) {
	t.Helper()
	byGroup := groupAllocs(t, c, jobID, version)
	for _, g := range rolloutGroups {
		if n := len(byGroup[g.name]); n != g.count {
			t.Errorf("group %s has %d allocs of version %d, want %d", g.name, n, version, g.count)
		}
		for _, a := range byGroup[g.name] {
			if a.Healthy.IsZero() {
				t.Errorf("group %s: %s is not healthy at the end of the rollout", g.name, a.Name)
			}
		}
	}
	for i := 1; i < len(groupOrder); i++ {
		earlier, later := groupOrder[i-1], groupOrder[i]
		var lastHealthy time.Time
		for _, a := range byGroup[earlier] {
			if a.Healthy.After(lastHealthy) {
				lastHealthy = a.Healthy
			}
		}
		for _, a := range byGroup[later] {
			switch gap := a.Created.Sub(lastHealthy); {
			case gap <= 0:
				t.Errorf("group %s's %s was created at %s, before group %s was all healthy (%s)",
					later, a.Name, a.Created.Format("15:04:05.000"), earlier, lastHealthy.Format("15:04:05.000"))
			case gap < pause:
				t.Errorf("group %s's %s was created %s after group %s was all healthy, within pause_between_groups %s",
					later, a.Name, gap.Round(time.Millisecond), earlier, pause)
			default:
				t.Logf("group %s started %s after group %s was all healthy", later, gap.Round(time.Millisecond), earlier)
			}
		}
	}
	if t.Failed() {
		for _, g := range groupOrder {
			for _, a := range byGroup[g] {
				t.Log(a)
			}
		}
	}
}

// deploymentSample is one reading of a deployment: its description and
// its groups' states.
type deploymentSample struct {
	At          time.Time
	Status      string
	Description string
	States      map[string]string
}

// deploymentWatch reads one deployment every 25ms until stopped.
type deploymentWatch struct {
	stopCh, done chan struct{}
	once         sync.Once
	mu           sync.Mutex
	samples      []deploymentSample
}

// end stops the watch once.
func (w *deploymentWatch) end() {
	w.once.Do(func() { close(w.stopCh) })
	<-w.done
}

// watchDeployment starts a watch; should the test fail, the samples and
// the deployment as it then is are logged.
func watchDeployment(t testing.TB, c func() *apiclient.Client, id string) *deploymentWatch {
	w := &deploymentWatch{stopCh: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() {
		w.end()
		if t.Failed() {
			t.Logf("%d samples of deployment %s:\n%s", len(w.samples), id, describe(w.samples))
			if d, _, err := c().Deployments().Info(ctx(t), id, nil); err == nil {
				t.Logf("deployment %s at the end: %s", id, jsonString(d))
			}
		}
	})
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stopCh:
				return
			case <-time.After(25 * time.Millisecond):
			}
			d, _, err := c().Deployments().Info(ctx(t), id, nil)
			if err != nil || d == nil {
				continue
			}
			s := deploymentSample{At: time.Now(), Status: d.Status, Description: d.StatusDescription, States: map[string]string{}}
			for g, st := range d.TaskGroups {
				if st != nil {
					s.States[g] = st.State
				}
			}
			w.mu.Lock()
			w.samples = append(w.samples, s)
			w.mu.Unlock()
		}
	}()
	return w
}

// stop ends the watch and returns its samples.
func (w *deploymentWatch) stop(t testing.TB) []deploymentSample {
	t.Helper()
	w.end()
	if len(w.samples) < 10 {
		t.Fatalf("only %d samples of the deployment", len(w.samples))
	}
	return w.samples
}

// checkOneGroupAtATime checks the samples of a deployment of the job:
// never two groups rolling at once, and a group rolling only once every
// group before it in groupOrder is done.
func checkOneGroupAtATime(t testing.TB, samples []deploymentSample) {
	t.Helper()
	for _, s := range samples {
		for i, g := range groupOrder {
			if s.States[g] != structs.GroupStateRolling {
				continue
			}
			for _, earlier := range groupOrder[:i] {
				if s.States[earlier] != structs.GroupStateDone {
					t.Errorf("at %s group %s rolls while group %s is %q: %v (%q)",
						s.At.Format("15:04:05.000"), g, earlier, s.States[earlier], s.States, s.Description)
					return
				}
			}
		}
	}
}

// describe lists the distinct descriptions of the samples, with the
// group states seen beside each the first time, in order.
func describe(samples []deploymentSample) string {
	var b []string
	seen := map[string]bool{}
	for _, s := range samples {
		k := s.Description + fmt.Sprint(s.States)
		if !seen[k] {
			seen[k] = true
			b = append(b, fmt.Sprintf("%s %s %q %v", s.At.Format("15:04:05.000"), s.Status, s.Description, s.States))
		}
	}
	return strings.Join(b, "\n")
}

// TestRolloutGroupsInOrder: on a dev agent, version 2 of the three-group
// job rolls db, then api, then web, each group's allocs created only
// once the group before is all healthy and pause_between_groups (2s)
// later. job plan lists the groups in that order; while api rolls, the
// description says web waits for api; at the end each group's Order is
// its place in the order and its State "done".
func TestRolloutGroupsInOrder(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	const pause = 2 * time.Second
	next := firstGroupsVersion(t, c, groupsSpec{ID: "groups", Version: "1", Order: []string{"db", "api"}, Pause: "2s", MinHealthy: "1s"})

	// The plan before the rollout lists db's batch, then api's two,
	// then web's two (max_parallel = 1).
	resp, err := c.Jobs().Plan(ctx(t), next.ID, next.job(t), false)
	if err != nil {
		t.Fatalf("planning %s: %v", next.ID, err)
	}
	var planned []string
	for _, b := range resp.RolloutPlan {
		planned = append(planned, b.Group)
	}
	if got, want := strings.Join(planned, " "), "db api api web web"; got != want {
		t.Errorf("the plan's batches are of groups %q, want %q: %s", got, want, jsonString(resp.RolloutPlan))
	}

	start := time.Now()
	registerJob(t, c, next.job(t))
	var d *structs.Deployment
	eventually(t, 20*time.Second, "the deployment of version 1", func() error {
		var err error
		d, err = latestDeployment(t, c, next.ID)
		if err != nil {
			return err
		}
		if d.JobVersion != 1 {
			return fmt.Errorf("latest deployment is of v%d", d.JobVersion)
		}
		return nil
	})
	w := watchDeployment(t, func() *apiclient.Client { return c }, d.ID)
	d = waitRollout(t, c, next.ID, 1, structs.DeploymentStatusSuccessful, 90*time.Second)
	t.Logf("version 1 rolled out in %s", time.Since(start).Round(time.Millisecond))
	samples := w.stop(t)
	t.Logf("the deployment as sampled:\n%s", describe(samples))

	if got, want := groupStates(d), doneGroups(); got != want {
		t.Errorf("deployment groups %q, want %q", got, want)
	}
	checkGroupTurns(t, c, next.ID, 1, pause)
	checkOneGroupAtATime(t, samples)
	waits := structs.GroupWaitsDescription("web", "api")
	if waits != "Deployment is running: group web waits for group api" {
		t.Errorf("GroupWaitsDescription(web, api) = %q", waits)
	}
	seen := false
	for _, s := range samples {
		if s.Description == waits {
			seen = true
			if s.States["api"] != structs.GroupStateRolling && s.States["api"] != structs.GroupStateDone || s.States["web"] != structs.GroupStateWaiting {
				t.Errorf("%q while the groups are %v", waits, s.States)
			}
		}
	}
	if !seen {
		t.Errorf("no sample of the deployment said %q", waits)
	}
}

// TestRolloutGroupsSurviveFailover: on three servers and a client, the
// leader is SIGKILLed while api (the second group) has one of its two
// new allocs. The new leader holds the same turn (db done, api rolling,
// web waiting), web starts nothing until api is done, and the rollout
// finishes in the same deployment, each group in turn.
func TestRolloutGroupsSurviveFailover(t *testing.T) {
	chaosCheck(t)
	c := startChaosCluster(t)
	const pause = time.Second
	// A longer min_healthy_time keeps api's first new alloc in flight
	// across the election.
	next := firstGroupsVersion(t, c.api(), groupsSpec{ID: "groups-failover", Version: "1", Order: []string{"db", "api"}, Pause: "1s", MinHealthy: "2s"})
	registerJob(t, c.api(), next.job(t))

	var before *structs.Deployment
	eventually(t, 60*time.Second, "api's first new alloc", func() error {
		byGroup := map[string]int{}
		for _, a := range allocsOf(t, c.api(), next.ID) {
			if a.JobVersion == 1 {
				byGroup[a.TaskGroup]++
			}
		}
		if byGroup["web"] > 0 || byGroup["api"] > 1 {
			t.Fatalf("before the kill: new allocs by group %v", byGroup)
		}
		if byGroup["api"] != 1 {
			return fmt.Errorf("new allocs by group %v", byGroup)
		}
		d, err := latestDeployment(t, c.api(), next.ID)
		if err != nil {
			return err
		}
		before = d
		return nil
	})
	t.Logf("before the kill: %s %q", groupStates(before), before.StatusDescription)
	killed := c.killLeader()
	leader := c.waitLeader(c.up())
	t.Logf("killed %s; %s leads", killed.name, leader.name)

	// web gets no new alloc while api has fewer than two healthy ones.
	var mu sync.Mutex
	var early []string
	aw := watchAllocs(t, leader.api(), next.ID, func(allocs []*structs.AllocationListStub) {
		apiHealthy := countAllocs(allocs, 1, func(a *structs.AllocationListStub) bool { return a.TaskGroup == "api" && healthy(a) })
		web := countAllocs(allocs, 1, func(a *structs.AllocationListStub) bool { return a.TaskGroup == "web" })
		if web > 0 && apiHealthy < 2 {
			mu.Lock()
			defer mu.Unlock()
			if len(early) < 5 {
				early = append(early, fmt.Sprintf("%d new web allocs with %d api allocs healthy", web, apiHealthy))
			}
		}
	})
	dw := watchDeployment(t, leader.api, before.ID)

	after := deploymentByID(t, leader.api(), before.ID)
	t.Logf("after the failover: %s %q", groupStates(after), after.StatusDescription)
	want := fmt.Sprintf("db 1 %s, api 2 %s, web 3 %s", structs.GroupStateDone, structs.GroupStateRolling, structs.GroupStateWaiting)
	if got := groupStates(after); got != want {
		t.Errorf("after the failover the deployment's groups are %q, want %q", got, want)
	}

	d := waitRollout(t, leader.api(), next.ID, 1, structs.DeploymentStatusSuccessful, 90*time.Second)
	aw.stop(t)
	samples := dw.stop(t)
	if d.ID != before.ID {
		t.Errorf("the rollout finished in deployment %s, not %s", d.ID, before.ID)
	}
	if got, want := groupStates(d), doneGroups(); got != want {
		t.Errorf("deployment groups %q, want %q", got, want)
	}
	for _, e := range early {
		t.Errorf("web started before api was done: %s", e)
	}
	checkOneGroupAtATime(t, samples)
	checkGroupTurns(t, leader.api(), next.ID, 1, pause)
}
