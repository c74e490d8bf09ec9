package fsm

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// planResults500 is a realistic large entry: 500 placements, each with the
// job embedded, plus a deployment.
func planResults500() *structs.ApplyPlanResultsRequest {
	job := statetest.Job("bench", 500)
	dep := statetest.Deployment(job, 0)
	req := &structs.ApplyPlanResultsRequest{
		EvalID: statetest.ID("eval/bench"), Deployment: dep,
		UpdatedAt: statetest.T0.UnixNano(),
	}
	for i := range 500 {
		n := statetest.Node(fmt.Sprintf("n%d", i%50))
		req.AllocsPlaced = append(req.AllocsPlaced, statetest.Alloc(job, n, req.EvalID, dep.ID, i))
	}
	return req
}

// planResults500Shared is planResults500 with the job carried once in the
// request instead of in every alloc.
func planResults500Shared() *structs.ApplyPlanResultsRequest {
	req := planResults500()
	req.Job = req.AllocsPlaced[0].Job
	for i, a := range req.AllocsPlaced {
		c := *a
		c.Job = nil
		req.AllocsPlaced[i] = &c
	}
	return req
}

// clientUpdate28 is a client update entry of the size the servers write
// most during a large placement: 28 allocs turned running and healthy,
// each with one task and its three events.
func clientUpdate28() *structs.AllocClientUpdateRequest {
	req := &structs.AllocClientUpdateRequest{UpdatedAt: statetest.T0.UnixNano()}
	t := statetest.T0.UnixNano()
	for i := range 28 {
		req.Allocs = append(req.Allocs, &structs.Allocation{
			ID: statetest.ID(fmt.Sprintf("alloc/%d", i)), ClientStatus: structs.AllocClientStatusRunning,
			ClientDescription: "Tasks are running",
			TaskStates: map[string]*structs.TaskState{"server": {
				State: structs.TaskStateRunning, StartedAt: statetest.T0,
				Events: []*structs.TaskEvent{
					{Type: structs.TaskReceived, Time: t, Message: "Task received by client", DisplayMessage: "Task received by client"},
					{Type: structs.TaskSetup, Time: t + 1, Message: "Building Task Directory", DisplayMessage: "Building Task Directory"},
					{Type: structs.TaskStarted, Time: t + 2, Message: "Task started by client", DisplayMessage: "Task started by client"},
				},
			}},
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: statetest.Bool(true), Timestamp: statetest.T0},
		})
	}
	return req
}

func jobRegister() *structs.JobRegisterRequest {
	job := statetest.Job("bench", 3)
	return &structs.JobRegisterRequest{
		Job: job, Eval: statetest.Eval("bench", job), SubmitTime: statetest.T0.UnixNano(),
	}
}

type benchCodec struct {
	name string
	enc  func(v any) ([]byte, error)
	dec  func(b []byte, v any) error
}

var benchCodecs = []benchCodec{
	{"msgpack", func(v any) ([]byte, error) {
		var b []byte
		err := codec.NewEncoderBytes(&b, msgpackHandle).Encode(v)
		return b, err
	}, func(b []byte, v any) error { return codec.NewDecoderBytes(b, msgpackHandle).Decode(v) }},
	{"json", json.Marshal, json.Unmarshal},
}

// BenchmarkEncoding encodes and decodes the two dominant entries with each
// candidate codec and reports the entry size.
func BenchmarkEncoding(b *testing.B) {
	entries := []struct {
		name string
		req  any
		zero func() any
	}{
		{"plan500", planResults500(), func() any { return &structs.ApplyPlanResultsRequest{} }},
		{"plan500shared", planResults500Shared(), func() any { return &structs.ApplyPlanResultsRequest{} }},
		{"clientUpdate28", clientUpdate28(), func() any { return &structs.AllocClientUpdateRequest{} }},
		{"jobRegister", jobRegister(), func() any { return &structs.JobRegisterRequest{} }},
	}
	for _, e := range entries {
		for _, c := range benchCodecs {
			b.Run(e.name+"/"+c.name, func(b *testing.B) {
				var size int
				for b.Loop() {
					buf, err := c.enc(e.req)
					if err != nil {
						b.Fatal(err)
					}
					if err := c.dec(buf, e.zero()); err != nil {
						b.Fatal(err)
					}
					size = len(buf)
				}
				b.ReportMetric(float64(size), "bytes/entry")
			})
		}
	}
}
