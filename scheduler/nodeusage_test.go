package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// keptSummary prints a kept usage for comparison: sums, ports, nonzero
// counts and the counted allocs.
func keptSummary(u *nodeUsage) string {
	var ports []string
	for p, n := range u.ports {
		ports = append(ports, fmt.Sprintf("%d×%d", p, n))
	}
	var jobs []string
	for k, n := range u.jobs {
		if n != 0 {
			jobs = append(jobs, fmt.Sprintf("%s/%s/%t=%d", k.job, k.group, k.whole, n))
		}
	}
	sort.Strings(ports)
	sort.Strings(jobs)
	var counted []string
	for _, ka := range u.kept {
		if ka.counted {
			counted = append(counted, fmt.Sprintf("%s@%d %s/%s/%s %+v %v", ka.id, ka.modify, ka.job.namespace, ka.job.id, ka.group, ka.res, ka.ports))
		}
	}
	return fmt.Sprintf("used=%+v ports=%v jobs=%v counted=%v", u.used, ports, jobs, counted)
}

// TestNodeUsageRecountMatchesCount: over random histories of one node's
// listed allocs (placed, stopped, finished, moved away, replaced by a
// changed copy with a new ModifyIndex, as a store writes it, gone), the
// usage counted again from the kept one must be the usage counted from
// scratch, and the kept usage it started from must not change.
func TestNodeUsageRecountMatchesCount(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	jobs := []*structs.Job{{ID: "web", Namespace: "default"}, {ID: "api", Namespace: "default"}, {ID: "web", Namespace: "other"}}
	recounted, changed := 0, 0
	for c := 0; c < 300; c++ {
		const node = "n1"
		var listed []*structs.Allocation
		next, write := 0, uint64(0)
		newAlloc := func() *structs.Allocation {
			next++
			write++
			j := jobs[r.IntN(len(jobs))]
			a := randomAlloc(r, fmt.Sprintf("a%04d", next*7%1000+r.IntN(7)), j, pick(r, "g1", "g2"), r.IntN(5), node)
			a.ModifyIndex = write
			return a
		}
		for range r.IntN(20) {
			listed = append(listed, newAlloc())
		}
		tidy := func(l []*structs.Allocation) []*structs.Allocation {
			slices.SortFunc(l, func(a, b *structs.Allocation) int { return strings.Compare(a.ID, b.ID) })
			return slices.CompactFunc(l, func(a, b *structs.Allocation) bool { return a.ID == b.ID })
		}
		listed = tidy(listed)
		kept := countUsage(node, listed)
		for step := 0; step < 20; step++ {
			before := keptSummary(kept)
			l := slices.Clone(listed)
			for range 1 + r.IntN(4) {
				switch k := r.IntN(6); {
				case k == 0 || len(l) == 0:
					l = append(l, newAlloc())
				case k == 1:
					i := r.IntN(len(l))
					l = slices.Delete(l, i, i+1)
				default:
					// A changed copy: a report, a stop, a move, new
					// resources or ports.
					// As a store writes it: with a new ModifyIndex.
					i := r.IntN(len(l))
					cp := l[i].Copy()
					write++
					cp.ModifyIndex = write
					switch r.IntN(5) {
					case 0:
						cp.ClientStatus = pick(r, "running", "complete", "failed", "pending")
					case 1:
						cp.DesiredStatus = pick(r, structs.AllocDesiredStatusRun, structs.AllocDesiredStatusStop)
					case 2:
						cp.NodeID = pick(r, node, "n2")
					case 3:
						cp.AllocatedResources.Tasks["main"].Cpu.CpuShares += 50
					case 4:
						cp.AllocatedResources.Shared.Ports = []structs.PortMapping{{Label: "p", Value: pick(r, 8080, 20000, 20005)}}
					}
					l[i] = cp
					changed++
				}
			}
			l = tidy(l)
			got := kept.recount(node, l)
			if got == nil {
				t.Fatalf("case %d step %d: no recount of lists in ID order", c, step)
			}
			if a, b := keptSummary(countUsage(node, l)), keptSummary(got); a != b {
				t.Fatalf("case %d step %d: recount differs\ncount:   %s\nrecount: %s", c, step, a, b)
			}
			if after := keptSummary(kept); after != before {
				t.Fatalf("case %d step %d: the kept usage changed\nbefore: %s\nafter:  %s", c, step, before, after)
			}
			recounted++
			kept, listed = got, l
		}
	}
	if changed == 0 || recounted == 0 {
		t.Fatalf("histories too tame: %d recounts, %d changed copies", recounted, changed)
	}
	// Lists out of ID order are not merged.
	a, b := randomAlloc(r, "b", jobs[0], "g1", 0, "n1"), randomAlloc(r, "a", jobs[0], "g1", 1, "n1")
	if countUsage("n1", nil).recount("n1", []*structs.Allocation{a, b}) != nil {
		t.Fatal("a list out of ID order was merged")
	}
}
