package apiclient

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// allocsAnswer is a servers' answer to a client's alloc read in a
// rollout: n allocs of a two-task job, each running with its tasks'
// three events, the first with its job and the rest without (the client
// holds it).
func allocsAnswer(n int) any {
	job := statetest.Job("web", n)
	node := statetest.Node("n1")
	healthy := true
	var allocs []*structs.Allocation
	held := map[string]int{}
	for i := range n {
		a := statetest.Alloc(job, node, "e", "d", i)
		a.ClientStatus, a.ClientDescription = structs.AllocClientStatusRunning, "Tasks are running"
		a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: statetest.T0}
		a.TaskStates = map[string]*structs.TaskState{}
		for _, task := range []string{"server", "sidecar"} {
			t := statetest.T0.UnixNano()
			a.TaskStates[task] = &structs.TaskState{State: structs.TaskStateRunning, StartedAt: statetest.T0.Add(time.Second),
				Events: []*structs.TaskEvent{
					{Type: structs.TaskReceived, Time: t, Message: "Task received by client", DisplayMessage: "Task received by client"},
					{Type: structs.TaskSetup, Time: t + 1, Message: "Building Task Directory", DisplayMessage: "Building Task Directory"},
					{Type: structs.TaskStarted, Time: t + 2, Message: "Task started by client", DisplayMessage: "Task started by client"},
				}}
		}
		if i > 0 {
			a.Job = nil
			held[a.ID] = 0
		}
		allocs = append(allocs, a)
	}
	return map[string]any{"Allocs": allocs, "FromHeld": held, "Index": 100}
}

// BenchmarkAllocsAnswer encodes (as a server) and decodes (as a client)
// an answer to a client's alloc read of 1 and of 10 allocs, in JSON and
// in MessagePack.
func BenchmarkAllocsAnswer(b *testing.B) {
	for _, n := range []int{1, 10} {
		v := allocsAnswer(n)
		for _, c := range []struct {
			name   string
			encode func(any) ([]byte, error)
			decode func([]byte, any) error
		}{
			{"json", json.Marshal, json.Unmarshal},
			{"msgpack", wire.Encode, wire.Decode},
		} {
			body, err := c.encode(v)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("allocs=%d/%s/encode", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.encode(v); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(body)), "bytes/answer")
			})
			b.Run(fmt.Sprintf("allocs=%d/%s/decode", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					var out struct {
						Allocs   []*structs.Allocation
						FromHeld map[string]int
						Index    uint64
					}
					if err := c.decode(body, &out); err != nil {
						b.Fatal(err)
					}
					if len(out.Allocs) != n {
						b.Fatalf("decoded %d allocs", len(out.Allocs))
					}
					for _, a := range out.Allocs {
						a.Job.JSONNumbers()
					}
				}
			})
		}
	}
}
