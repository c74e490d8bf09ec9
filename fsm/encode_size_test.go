package fsm

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// An entry stays in memory until raft has applied it: Encode must not
// hand back the slack of a buffer grown by doubling.
func TestEncodeReturnsNoSlack(t *testing.T) {
	job := statetest.Job("web", 1000)
	for _, n := range []int{0, 1, 37, 500} {
		req := &structs.ApplyPlanResultsRequest{Job: job}
		for k := range n {
			a := statetest.Alloc(job, statetest.Node(fmt.Sprint(k%7)), "e", "", k)
			a.Job = nil
			req.AllocsPlaced = append(req.AllocsPlaced, a)
		}
		b, err := Encode(ApplyPlanResultsRequestType, req)
		if err != nil {
			t.Fatal(err)
		}
		if cap(b) != len(b) {
			t.Errorf("%d allocs: entry of %d bytes holds %d", n, len(b), cap(b))
		}
		var back structs.ApplyPlanResultsRequest
		if err := decode(b[1:], &back); err != nil || len(back.AllocsPlaced) != n {
			t.Fatalf("%d allocs: decoded %d, %v", n, len(back.AllocsPlaced), err)
		}
	}
}
