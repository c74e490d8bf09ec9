package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// The zone tests roll a job of six allocs, one per client (distinct_hosts),
// over six client processes in three zones named by their node meta
// (-meta zone=…): a (c1, c2, c3), b (c4) and c (c5, c6). They look at the
// rollout through the HTTP API once it is over: each new alloc's zone, the
// plan that created it (its CreateIndex), when it was created and when it
// turned healthy, and the deployment's TaskGroups.web.Zones
// (website/rollouts.md, Zones and The plan before the rollout).

// zoneClients are the client nodes and their zones.
var zoneClients = []struct{ node, zone string }{
	{"c1", "a"}, {"c2", "a"}, {"c3", "a"}, {"c4", "b"}, {"c5", "c"}, {"c6", "c"},
}

func nodeZone(node string) string {
	for _, c := range zoneClients {
		if c.node == node {
			return c.zone
		}
	}
	return ""
}

// startZoneClients starts the six clients against the servers at addrs
// (HTTP), each with its zone in -meta, and waits until via lists them all
// ready.
func startZoneClients(t testing.TB, dir string, addrs []string, via *agentProc) {
	t.Helper()
	for _, c := range zoneClients {
		http, data := loopback.Addr(t), filepath.Join(dir, c.node)
		endTasksUnder(t, data)
		startAgentProc(t, c.node, http, "-client", "-data-dir", data, "-servers", strings.Join(addrs, ","),
			"-http-addr", http, "-node", c.node, "-meta", "zone="+c.zone, "-log-level", "debug")
	}
	via.waitNodeReady(len(zoneClients))
}

// startZoneCluster starts one server and the six clients; it returns the
// server.
func startZoneCluster(t *testing.T) *agentProc {
	t.Helper()
	if testing.Short() {
		t.Skip("runs seven agent processes and real tasks")
	}
	dir := t.TempDir()
	http, raft := loopback.Addr(t), loopback.Addr(t)
	s := startAgentProc(t, "s1", http, "-server", "-bootstrap-expect", "1", "-data-dir", filepath.Join(dir, "s1"),
		"-http-addr", http, "-raft-addr", raft, "-node", "s1", "-log-level", "debug")
	// Clients that find no leader retry after a back-off: start them once
	// there is one.
	eventually(t, 30*time.Second, "a leader", func() error {
		if l, err := s.client().Status().Leader(ctx(t)); err != nil || l == "" {
			return fmt.Errorf("leader %q, %v", l, err)
		}
		return nil
	})
	startZoneClients(t, dir, []string{http}, s)
	return s
}

// zoneSpec is a job of six allocs, one per node, rolled by the nodes'
// zone meta with the given zones block lines and update lines.
func zoneSpec(id string, zones []string, update ...string) rolloutSpec {
	lines := append([]string{}, update...)
	lines = append(lines, "zones {", `  attribute = "${node.meta.zone}"`)
	for _, z := range zones {
		lines = append(lines, "  "+z)
	}
	lines = append(lines, "}")
	return rolloutSpec{ID: id, Count: len(zoneClients), Version: "1", Update: policyUpdate(lines...),
		Group: "    constraint {\n      distinct_hosts = true\n    }"}
}

// zoneAlloc is what the zone checks need of one alloc.
type zoneAlloc struct {
	ID, Name, Node, Zone string
	Version              uint64
	CreateIndex          uint64
	Created, Healthy     time.Time // Healthy: zero unless healthy
	ClientStatus         string
}

func (a zoneAlloc) String() string {
	h := "-"
	if !a.Healthy.IsZero() {
		h = a.Healthy.Format("15:04:05.000")
	}
	return fmt.Sprintf("%s v%d zone %q node %s index %d created %s healthy %s %s",
		a.Name, a.Version, a.Zone, a.Node, a.CreateIndex, a.Created.Format("15:04:05.000"), h, a.ClientStatus)
}

// zoneAllocs lists the job's allocs of version, ordered by CreateIndex
// then name, and checks that each carries its node's zone (the list's
// Zone, as GET /v1/job/:id/allocations gives it).
func zoneAllocs(t testing.TB, c *apiclient.Client, jobID string, version uint64) []zoneAlloc {
	t.Helper()
	var out []zoneAlloc
	for _, a := range allocsOf(t, c, jobID) {
		if a.JobVersion != version {
			continue
		}
		za := zoneAlloc{ID: a.ID, Name: a.Name, Node: a.NodeName, Zone: a.Zone, Version: version,
			CreateIndex: a.CreateIndex, Created: time.Unix(0, a.CreateTime), ClientStatus: a.ClientStatus}
		if healthy(a) {
			za.Healthy = a.DeploymentStatus.Timestamp
		}
		if want := nodeZone(a.NodeName); za.Zone != want {
			t.Errorf("alloc %s on node %s has Zone %q, want its node's zone %q", a.Name, a.NodeName, za.Zone, want)
		}
		out = append(out, za)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreateIndex != out[j].CreateIndex {
			return out[i].CreateIndex < out[j].CreateIndex
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// zoneBatch is the new allocs one plan created in one zone.
type zoneBatch struct {
	Zone   string
	Allocs []string // names, sorted
}

// liveBatches groups new allocs by the plan that created them
// (CreateIndex), in order, and fails the test when a plan created allocs
// in two zones (unless mixed is allowed: concurrent mode starts several
// zones in one plan, one batch each).
func liveBatches(t testing.TB, allocs []zoneAlloc, mixed bool) []zoneBatch {
	t.Helper()
	var out []zoneBatch
	byIndex := map[uint64]map[string][]string{}
	var indexes []uint64
	for _, a := range allocs {
		if byIndex[a.CreateIndex] == nil {
			byIndex[a.CreateIndex] = map[string][]string{}
			indexes = append(indexes, a.CreateIndex)
		}
		byIndex[a.CreateIndex][a.Zone] = append(byIndex[a.CreateIndex][a.Zone], a.Name)
	}
	for _, i := range indexes {
		zones := byIndex[i]
		if len(zones) > 1 && !mixed {
			t.Errorf("the plan at index %d created allocs in %d zones: %v", i, len(zones), zones)
		}
		names := make([]string, 0, len(zones))
		for z := range zones {
			names = append(names, z)
		}
		sort.Strings(names)
		for _, z := range names {
			slices.Sort(zones[z])
			out = append(out, zoneBatch{Zone: z, Allocs: zones[z]})
		}
	}
	return out
}

// zoneSequence is the order in which batches visit zones, consecutive
// batches of one zone counted once.
func zoneSequence(batches []zoneBatch) []string {
	var seq []string
	for _, b := range batches {
		if len(seq) == 0 || seq[len(seq)-1] != b.Zone {
			seq = append(seq, b.Zone)
		}
	}
	return seq
}

// checkZoneByZone checks a finished zone-by-zone rollout of the new
// allocs against the expected zone order: every zone's allocs are created
// only once every alloc of the zone before is healthy, no plan mixes
// zones, and the batches visit each zone once, in order.
func checkZoneByZone(t testing.TB, allocs []zoneAlloc, order []string) []zoneBatch {
	t.Helper()
	return checkZonePause(t, allocs, order, 0)
}

// checkZonePause is checkZoneByZone with pause_between_zones: a zone's
// allocs are created no sooner than pause after the zone before is all
// healthy.
func checkZonePause(t testing.TB, allocs []zoneAlloc, order []string, pause time.Duration) []zoneBatch {
	t.Helper()
	byZone := map[string][]zoneAlloc{}
	for _, a := range allocs {
		byZone[a.Zone] = append(byZone[a.Zone], a)
	}
	for i := 1; i < len(order); i++ {
		var lastHealthy time.Time
		for _, a := range byZone[order[i-1]] {
			if a.Healthy.IsZero() {
				t.Errorf("zone %s: %s never turned healthy, yet zone %s started", order[i-1], a.Name, order[i])
			}
			if a.Healthy.After(lastHealthy) {
				lastHealthy = a.Healthy
			}
		}
		for _, a := range byZone[order[i]] {
			if !a.Created.After(lastHealthy) {
				t.Errorf("zone %s's %s was created at %s, before zone %s was all healthy (%s)",
					order[i], a.Name, a.Created.Format("15:04:05.000"), order[i-1], lastHealthy.Format("15:04:05.000"))
			} else if a.Created.Sub(lastHealthy) < pause {
				t.Errorf("zone %s's %s was created %s after zone %s was all healthy, within pause_between_zones %s",
					order[i], a.Name, a.Created.Sub(lastHealthy).Round(time.Millisecond), order[i-1], pause)
			}
		}
	}
	batches := liveBatches(t, allocs, false)
	if seq := zoneSequence(batches); !slices.Equal(seq, order) {
		t.Errorf("the batches visit zones %v, want %v", seq, order)
	}
	if t.Failed() {
		for _, a := range allocs {
			t.Log(a)
		}
	}
	return batches
}

// checkPinned checks that each new alloc runs in the zone of the old
// alloc of the same name.
func checkPinned(t testing.TB, old, replaced []zoneAlloc) {
	t.Helper()
	zoneOf := map[string]string{}
	for _, a := range old {
		zoneOf[a.Name] = a.Zone
	}
	for _, a := range replaced {
		if want, ok := zoneOf[a.Name]; ok && a.Zone != want {
			t.Errorf("%s moved from zone %s to zone %s", a.Name, want, a.Zone)
		}
	}
}

// zoneStates renders a group's zones as "name size/healthy/inflight/failed state" lines.
func zoneStates(st *structs.DeploymentState) string {
	var b []string
	for _, z := range st.Zones {
		b = append(b, fmt.Sprintf("%s %d/%d/%d/%d %s", z.Name, z.Size, z.Healthy, z.InFlight, z.Failed, z.State))
	}
	return strings.Join(b, ", ")
}

// doneZones is zoneStates of a finished rollout in order, zone sizes from
// zoneClients.
func doneZones(order ...string) string {
	var b []string
	for _, z := range order {
		n := 0
		for _, c := range zoneClients {
			if c.zone == z {
				n++
			}
		}
		b = append(b, fmt.Sprintf("%s %d/%d/0/0 done", z, n, n))
	}
	return strings.Join(b, ", ")
}

// firstVersion registers s and waits for its first version to roll out;
// it returns s's next version and the allocs of the first.
func firstVersion(t *testing.T, c *apiclient.Client, s rolloutSpec) (rolloutSpec, []zoneAlloc) {
	t.Helper()
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	s.Version = "2"
	return s, zoneAllocs(t, c, s.ID, 0)
}

// rollZones registers s, a job's second version, waits for its deployment
// to succeed, checks the deployment's zones (order, all done) and that
// every new alloc stayed in its old alloc's zone, and returns the new
// allocs.
func rollZones(t *testing.T, c *apiclient.Client, s rolloutSpec, old []zoneAlloc, order []string, limit time.Duration) []zoneAlloc {
	t.Helper()
	start := time.Now()
	s.run(t, c)
	d := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, limit)
	t.Logf("%s: version 1 rolled out in %s", s.ID, time.Since(start).Round(time.Millisecond))
	if got, want := zoneStates(webState(t, d)), doneZones(order...); got != want {
		t.Errorf("deployment zones %q, want %q", got, want)
	}
	replaced := zoneAllocs(t, c, s.ID, 1)
	if len(replaced) != len(zoneClients) {
		t.Errorf("%d allocs of version 1, want %d: %v", len(replaced), len(zoneClients), replaced)
	}
	checkPinned(t, old, replaced)
	return replaced
}

// planRollout asks the servers for the rollout plan of s.
func planRollout(t testing.TB, c *apiclient.Client, s rolloutSpec) []structs.RolloutBatch {
	t.Helper()
	resp, err := c.Jobs().Plan(ctx(t), s.ID, s.job(t), false)
	if err != nil {
		t.Fatalf("planning %s: %v", s.ID, err)
	}
	if resp.Warnings != "" {
		t.Logf("plan warnings: %s", resp.Warnings)
	}
	return resp.RolloutPlan
}

// comparePlan checks the live batches against the plan: the same zones in
// the same order and the same allocs in each zone; the batches themselves
// are compared exactly in the zones listed in exact (those no larger than
// max_parallel, where health arriving at different moments cannot split
// a batch).
func comparePlan(t testing.TB, plan []structs.RolloutBatch, live []zoneBatch, exact ...string) {
	t.Helper()
	var planned []zoneBatch
	for _, b := range plan {
		names := slices.Clone(b.Allocs)
		slices.Sort(names)
		planned = append(planned, zoneBatch{Zone: b.Zone, Allocs: names})
	}
	if p, l := zoneSequence(planned), zoneSequence(live); !slices.Equal(p, l) {
		t.Errorf("plan visits zones %v, the rollout %v", p, l)
	}
	perZone := func(bs []zoneBatch) map[string]string {
		m := map[string][]string{}
		for _, b := range bs {
			m[b.Zone] = append(m[b.Zone], b.Allocs...)
		}
		out := map[string]string{}
		for z, names := range m {
			slices.Sort(names)
			out[z] = strings.Join(names, " ")
		}
		return out
	}
	pz, lz := perZone(planned), perZone(live)
	for z := range pz {
		if pz[z] != lz[z] {
			t.Errorf("zone %s: the plan replaces [%s], the rollout replaced [%s]", z, pz[z], lz[z])
		}
	}
	for _, z := range exact {
		var p, l []string
		for _, b := range planned {
			if b.Zone == z {
				p = append(p, strings.Join(b.Allocs, " "))
			}
		}
		for _, b := range live {
			if b.Zone == z {
				l = append(l, strings.Join(b.Allocs, " "))
			}
		}
		if !slices.Equal(p, l) {
			t.Errorf("zone %s: planned batches %q, live batches %q", z, p, l)
		}
	}
	if t.Failed() {
		t.Logf("plan: %s", jsonString(plan))
		t.Logf("live: %s", jsonString(live))
	}
}

// TestRolloutZones runs the zone rollouts on one server and six clients
// in zones a (3 nodes), b (1) and c (2), each subtest with its own job.
func TestRolloutZones(t *testing.T) {
	t.Parallel()
	server := startZoneCluster(t)
	c := server.client()

	// fewest_first rolls b (1 alloc), then c (2), then a (3); each zone
	// starts only once the one before is all healthy, and no plan mixes
	// zones. The plan asked before the rollout is what the rollout did,
	// zone by zone; zone a (3) is wider than max_parallel (2), so its
	// batches may split differently.
	t.Run("fewest_first", func(t *testing.T) {
		t.Parallel()
		order := []string{"b", "c", "a"}
		next, old := firstVersion(t, c, zoneSpec("zones-fewest", nil, "max_parallel = 2"))
		plan := planRollout(t, c, next)
		live := checkZoneByZone(t, rollZones(t, c, next, old, order, 45*time.Second), order)
		comparePlan(t, plan, live, "b", "c")
	})

	// An order list names x, a and b: x, which no node has, is passed
	// over (job plan warns of it); c, which it does not name, follows b.
	t.Run("explicit_order", func(t *testing.T) {
		t.Parallel()
		order := []string{"a", "b", "c"}
		next, old := firstVersion(t, c, zoneSpec("zones-order", []string{`order = ["x", "a", "b"]`}, "max_parallel = 3"))
		resp, err := c.Jobs().Plan(ctx(t), next.ID, next.job(t), false)
		if err != nil {
			t.Fatal(err)
		}
		if want := `update.zones.order names zone "x", which no node has`; !strings.Contains(resp.Warnings, want) {
			t.Errorf("plan warnings %q, want one with %q", resp.Warnings, want)
		}
		checkZoneByZone(t, rollZones(t, c, next, old, order, 45*time.Second), order)
	})

	// concurrent starts every zone in the first plan, one batch per zone.
	t.Run("concurrent", func(t *testing.T) {
		t.Parallel()
		next, old := firstVersion(t, c, zoneSpec("zones-concurrent", []string{`mode = "concurrent"`}, "max_parallel = 1"))
		replaced := rollZones(t, c, next, old, []string{"b", "c", "a"}, 45*time.Second)
		first := map[string]bool{}
		for _, a := range replaced {
			if a.CreateIndex == replaced[0].CreateIndex {
				first[a.Zone] = true
			}
		}
		if got := sortedKeys(first); got != "a,b,c" {
			t.Errorf("the first plan started zones %q, want a,b,c", got)
		}
		// max_parallel = 1 applies in each zone: one new alloc per zone
		// per plan.
		for _, b := range liveBatches(t, replaced, true) {
			if len(b.Allocs) != 1 {
				t.Errorf("a batch of %d allocs in zone %s: %v", len(b.Allocs), b.Zone, b.Allocs)
			}
		}
		if t.Failed() {
			for _, a := range replaced {
				t.Log(a)
			}
		}
	})

	// max_parallel = 3 is at least every zone's size: each zone is one
	// batch, in the plan and live, and the plan's pauses fall between
	// zones, where the rollout waits pause_between_zones.
	t.Run("plan_equals_rollout", func(t *testing.T) {
		t.Parallel()
		order := []string{"b", "c", "a"}
		next, old := firstVersion(t, c, zoneSpec("zones-plan", []string{`pause_between_zones = "1s"`}, "max_parallel = 3"))
		plan := planRollout(t, c, next)
		var pauses []string
		for _, b := range plan {
			pauses = append(pauses, b.Zone+":"+b.PauseAfter)
		}
		if got, want := strings.Join(pauses, " "), "b:zone c:zone a:"; got != want {
			t.Errorf("plan zones and pauses %q, want %q", got, want)
		}
		live := checkZonePause(t, rollZones(t, c, next, old, order, 45*time.Second), order, time.Second)
		comparePlan(t, plan, live, order...)
	})

	// unhealthy_first: the old allocs broken in zones a and c are
	// replaced first, in one batch across both zones (the only batch that
	// may cross zones); then b, c and a one alloc at a time. The plan
	// lists that batch one zone at a time and the rest batch for batch.
	t.Run("unhealthy_first", func(t *testing.T) {
		t.Parallel()
		next, old := firstVersion(t, c, zoneSpec("zones-broken", nil, "max_parallel = 1", "unhealthy_first = true"))
		broken := map[string]string{} // zone → alloc ID
		var names []string
		for _, a := range old {
			if (a.Zone == "a" || a.Zone == "c") && broken[a.Zone] == "" {
				broken[a.Zone] = a.ID
				names = append(names, a.Name)
				killAllocProcs(a.ID)
			}
		}
		slices.Sort(names)
		eventually(t, 20*time.Second, "the killed allocs failed", func() error {
			for _, a := range allocsOf(t, c, next.ID) {
				if (a.ID == broken["a"] || a.ID == broken["c"]) && a.ClientStatus != structs.AllocClientStatusFailed {
					return fmt.Errorf("%s is %s", a.Name, a.ClientStatus)
				}
			}
			return nil
		})
		plan := planRollout(t, c, next)
		replaced := rollZones(t, c, next, old, []string{"b", "c", "a"}, 45*time.Second)
		live := liveBatches(t, replaced, true)
		var first []string
		for _, a := range replaced {
			if a.CreateIndex == replaced[0].CreateIndex {
				first = append(first, a.Name)
			}
		}
		slices.Sort(first)
		if !slices.Equal(first, names) {
			t.Errorf("the first plan replaced %v, want the broken %v", first, names)
		}
		rest := checkZoneByZone(t, replaced[len(first):], []string{"b", "c", "a"})
		var planFirst []string
		for _, b := range plan[:min(2, len(plan))] {
			planFirst = append(planFirst, b.Allocs...)
		}
		slices.Sort(planFirst)
		if !slices.Equal(planFirst, names) {
			t.Errorf("the plan's first two batches replace %v, want the broken %v", planFirst, names)
		}
		if len(plan) >= 2 {
			comparePlan(t, plan[2:], rest, "a", "b", "c")
		}
		if t.Failed() {
			t.Logf("plan: %s", jsonString(plan))
			t.Logf("live: %s", jsonString(live))
		}
	})

	// Version 2 fails on zone c's nodes: zone b rolls, then c's first new
	// alloc fails, which reaches c's disruption budget of 1, and the
	// deployment pauses there with a waiting; nothing more is placed.
	// Resumed, zone c's failure is forgiven and it rolls on: its second
	// new alloc fails too, and the deployment pauses again.
	t.Run("budget_pause", func(t *testing.T) {
		t.Parallel()
		spec := zoneSpec("zones-budget", []string{"disruption_budget = 1"}, "max_parallel = 2", `on_failure = "pause"`)
		next, _ := firstVersion(t, c, spec)
		// The client fills ${meta.zone} with its node's meta.
		next.Script = `if [ "${meta.zone}" = c ]; then sleep 0.3; exit 1; fi; exec sleep 600`
		next.run(t, c)
		const want = "Deployment paused: 1 allocations failed in zone c, reaching its disruption budget 1"
		d := waitRollout(t, c, next.ID, 1, structs.DeploymentStatusPaused, 45*time.Second)
		if d.StatusDescription != want {
			t.Errorf("paused with %q, want %q", d.StatusDescription, want)
		}
		if got, want := zoneStates(webState(t, d)), "b 1/1/0/0 done, c 2/0/0/1 failed, a 3/0/0/0 waiting"; got != want {
			t.Errorf("deployment zones %q, want %q", got, want)
		}
		holdStill(t, c, next.ID, 1, d.ID, 2*time.Second)
		allocs := zoneAllocs(t, c, next.ID, 1)
		zones := map[string]int{}
		for _, a := range allocs {
			zones[a.Zone]++
		}
		if zones["a"] != 0 || zones["b"] != 1 || zones["c"] != 1 {
			t.Errorf("allocs of version 1 by zone %v, want b:1 c:1", zones)
			for _, a := range allocs {
				t.Log(a)
			}
		}

		if _, err := c.Deployments().Pause(ctx(t), d.ID, false); err != nil {
			t.Fatalf("resuming %s: %v", d.ID, err)
		}
		waitDeploymentByID(t, c, d.ID, "zone c's second failure", 30*time.Second, func(d *structs.Deployment) error {
			if n := countAllocs(allocsOf(t, c, next.ID), 1, func(a *structs.AllocationListStub) bool { return nodeZone(a.NodeName) == "c" }); n != 2 {
				return fmt.Errorf("%d allocs of version 1 in zone c", n)
			}
			return pausedWith(want)(d)
		})
		d = deploymentByID(t, c, d.ID)
		if got, want := zoneStates(webState(t, d)), "b 1/1/0/0 done, c 2/0/0/1 failed, a 3/0/0/0 waiting"; got != want {
			t.Errorf("paused again, deployment zones %q, want %q", got, want)
		}
		// deployment status prints the zones in rollout order.
		out, err := server.cli(t, "deployment", "status", d.ID)
		if err != nil {
			t.Fatalf("deployment status: %v", err)
		}
		var table []string
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if (len(table) == 0 && len(f) > 0 && f[0] == "Zone") || (len(table) > 0 && len(f) > 0) {
				table = append(table, strings.Join(f, " "))
			} else if len(table) > 0 {
				break
			}
		}
		if got, want := strings.Join(table, "\n"), "Zone Size Healthy In Flight Failed State\nb 1 1 0 0 done\nc 2 0 0 1 failed\na 3 0 0 0 waiting"; got != want {
			t.Errorf("deployment status zones:\n%s\nwant:\n%s", got, want)
		}
	})
}

// TestRolloutZonesSurviveFailover: on three servers and the six zoned
// clients, the leader is SIGKILLed while zone c (the second of b, c, a;
// max_parallel = 1) has one of its two new allocs. The new leader holds
// the same zones in the same order and goes on with zone c's second
// alloc, then zone a; no plan mixes zones, no zone starts before the one
// before it is healthy and pause_between_zones has passed, and the
// rollout finishes.
func TestRolloutZonesSurviveFailover(t *testing.T) {
	chaosCheck(t)
	dir := t.TempDir()
	c := startChaosServers(t, dir)
	c.waitLeader(c.servers)
	startZoneClients(t, dir, c.httpAddrs(), c.any())

	order := []string{"b", "c", "a"}
	spec := zoneSpec("zones-failover", []string{`pause_between_zones = "1s"`}, "max_parallel = 1")
	// A longer min_healthy_time than fastUpdate's keeps zone c's first
	// alloc in flight across the election.
	longer := strings.Replace(spec.Update, `min_healthy_time  = "1s"`, `min_healthy_time  = "2s"`, 1)
	if longer == spec.Update {
		t.Fatalf("no min_healthy_time to lengthen in:\n%s", spec.Update)
	}
	spec.Update = longer
	next, old := firstVersion(t, c.api(), spec)
	next.run(t, c.api())

	var before *structs.Deployment
	eventually(t, 60*time.Second, "zone c's first new alloc", func() error {
		zones := map[string]int{}
		for _, a := range allocsOf(t, c.api(), next.ID) {
			if a.JobVersion == 1 {
				zones[nodeZone(a.NodeName)]++
			}
		}
		if zones["c"] > 1 || zones["a"] > 0 {
			t.Fatalf("zone c did not start one alloc at a time: new allocs by zone %v", zones)
		}
		if zones["c"] != 1 {
			return fmt.Errorf("new allocs by zone %v", zones)
		}
		d, err := latestDeployment(t, c.api(), next.ID)
		if err != nil {
			return err
		}
		before = d
		return nil
	})
	t.Logf("before the kill: %s", zoneStates(webState(t, before)))
	killed := c.killLeader()
	leader := c.waitLeader(c.up())
	t.Logf("killed %s; %s leads", killed.name, leader.name)

	// The new leader holds the order and zone b done; zone a waits.
	after := deploymentByID(t, leader.api(), before.ID)
	var names []string
	for _, z := range webState(t, after).Zones {
		names = append(names, z.Name)
	}
	if !slices.Equal(names, order) {
		t.Errorf("after the failover the zones are %v, want %v", names, order)
	}
	if z := webState(t, after).Zones; len(z) == 3 && (z[0].State != structs.ZoneStateDone || z[2].State != structs.ZoneStateWaiting) {
		t.Errorf("after the failover: %s; want b done and a waiting", zoneStates(webState(t, after)))
	}

	d := waitRollout(t, c.api(), next.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	if d.ID != before.ID {
		t.Errorf("the rollout finished in deployment %s, not %s", d.ID, before.ID)
	}
	if got, want := zoneStates(webState(t, d)), doneZones(order...); got != want {
		t.Errorf("deployment zones %q, want %q", got, want)
	}
	replaced := zoneAllocs(t, c.api(), next.ID, 1)
	if len(replaced) != len(zoneClients) {
		t.Errorf("%d allocs of version 1, want %d", len(replaced), len(zoneClients))
	}
	checkPinned(t, old, replaced)
	batches := checkZonePause(t, replaced, order, time.Second)
	if len(batches) != len(zoneClients) {
		t.Errorf("%d batches, want %d of one alloc (max_parallel = 1): %s", len(batches), len(zoneClients), jsonString(batches))
	}
}
