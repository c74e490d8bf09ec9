package server

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// checkSummary prints what checkPlan decided, for comparison.
func checkSummary(acc []*structs.Allocation, stops []*structs.AllocStopUpdate, rej []string, err error) string {
	var s []string
	for _, st := range stops {
		s = append(s, st.AllocID)
	}
	return fmt.Sprintf("accepted %v\nstops %v\nrejected %v\nerr %v", ids(acc), s, rej, err)
}

// TestCheckPlanKeptUsageMatchesRead: over random histories of a small
// cluster (placements, stops, client reports, nodes going down), with one
// scheduler NodeTable kept across them as the leader keeps it, checkPlan
// decides through the table's kept node usage exactly what it decides by
// reading and counting each node's allocs: the same placements accepted
// and rejected and the same stops, whatever the plan stops, replaces or
// finds committing before it.
func TestCheckPlanKeptUsageMatchesRead(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	job := testJob("web", 1, 100)
	other := testJob("api", 1, 100)
	compared, withPrev, rejected := 0, 0, 0
	for c := 0; c < 40; c++ {
		s, err := state.New()
		must(t, err)
		var nodes []*structs.Node
		for i := range 2 + r.IntN(4) {
			n := testNode(fmt.Sprint(i), int64(500+r.IntN(6)*250), 4096)
			nodes = append(nodes, n)
			must(t, s.UpsertNode(uint64(1+i), n))
		}
		_, err = s.RegisterJob(10, &structs.JobRegisterRequest{Job: job})
		must(t, err)
		_, err = s.RegisterJob(11, &structs.JobRegisterRequest{Job: other})
		must(t, err)
		table := scheduler.NewNodeTable(nodes)
		index := uint64(20)
		next := 0
		newAlloc := func() *structs.Allocation {
			next++
			j := job
			if r.IntN(3) == 0 {
				j = other
			}
			var ports []int
			if r.IntN(3) == 0 {
				ports = []int{8080 + r.IntN(3)}
			}
			return placedAlloc(fmt.Sprintf("a%03d", next), j, nodes[r.IntN(len(nodes))].ID, int64(50+r.IntN(8)*50), ports...)
		}
		var live []string
		for step := 0; step < 25; step++ {
			index++
			// Change the state.
			switch k := r.IntN(5); {
			case k <= 1 || len(live) == 0:
				var batch []*structs.Allocation
				for range 1 + r.IntN(4) {
					a := newAlloc()
					batch = append(batch, a)
					live = append(live, a.ID)
				}
				must(t, s.UpsertAllocs(index, batch, 1))
			case k == 2:
				a, err := s.Snapshot().AllocByID(live[r.IntN(len(live))])
				must(t, err)
				up := a.Copy()
				up.ClientStatus = []string{structs.AllocClientStatusRunning, structs.AllocClientStatusComplete, structs.AllocClientStatusFailed}[r.IntN(3)]
				must(t, s.UpdateAllocsFromClient(index, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{up}}))
			case k == 3:
				a, err := s.Snapshot().AllocByID(live[r.IntN(len(live))])
				must(t, err)
				st := a.Copy()
				st.DesiredStatus = structs.AllocDesiredStatusStop
				must(t, s.UpsertAllocs(index, []*structs.Allocation{st}, 1))
			default:
				n := nodes[r.IntN(len(nodes))].Copy()
				if n.Status == structs.NodeStatusReady && r.IntN(3) == 0 {
					n.Status = structs.NodeStatusDown
				} else {
					n.Status = structs.NodeStatusReady
				}
				must(t, s.UpsertNode(index, n))
			}
			snap := s.Snapshot()
			// A random plan: placements (some replacing an alloc), stops,
			// and sometimes a plan still committing before it.
			p := &planSubmission{job: job, replaces: map[string]*structs.AllocStopUpdate{}}
			for range 1 + r.IntN(6) {
				a := newAlloc()
				p.placed = append(p.placed, a)
				if r.IntN(2) == 0 {
					p.replaces[a.ID] = &structs.AllocStopUpdate{AllocID: live[r.IntN(len(live))]}
				}
			}
			for range r.IntN(3) {
				p.stops = append(p.stops, &structs.AllocStopUpdate{AllocID: live[r.IntN(len(live))]})
			}
			var prev *inflight
			if r.IntN(3) == 0 {
				prev = &inflight{byNode: map[string][]*structs.Allocation{}, stopped: map[string]bool{}}
				for range 1 + r.IntN(3) {
					a := newAlloc()
					prev.byNode[a.NodeID] = append(prev.byNode[a.NodeID], a)
				}
				for range r.IntN(3) {
					prev.stopped[live[r.IntN(len(live))]] = true
				}
				withPrev++
			}
			want := checkSummary(checkPlan(snap, p, prev, nil))
			// Twice through the table: counted (or counted again), then
			// as kept.
			for k := range 2 {
				got := checkSummary(checkPlan(snap, p, prev, table))
				if got != want {
					t.Fatalf("case %d step %d (pass %d through the table): checkPlan differs\nread:\n%s\nkept:\n%s", c, step, k, want, got)
				}
			}
			if strings.Contains(want, "rejected [a") {
				rejected++
			}
			compared++
			slices.Sort(live)
		}
	}
	if compared == 0 || withPrev == 0 || rejected == 0 {
		t.Fatalf("histories too tame: %d plans compared, %d with a committing plan, %d with rejections", compared, withPrev, rejected)
	}
}
