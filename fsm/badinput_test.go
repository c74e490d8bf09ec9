package fsm

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func rawLog(index uint64, data []byte) *raft.Log {
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: data}
}

func TestApplyBadInput(t *testing.T) {
	good := entry(t, JobRegisterRequestType, &structs.JobRegisterRequest{Job: statetest.Job("web", 1)})
	cases := []struct {
		name string
		data []byte
		want error // nil: ignored
	}{
		{"empty", nil, ErrEmptyEntry},
		{"type only", []byte{byte(JobRegisterRequestType)}, ErrDecode},
		{"truncated", good[:len(good)/2], ErrDecode},
		{"corrupt payload", append([]byte{byte(JobRegisterRequestType)}, 0xc1, 0xff, 0x00), ErrDecode},
		{"wrong shape", entry(t, JobRegisterRequestType, []string{"a", "b"}), ErrDecode},
		{"unknown type", append([]byte{0x7e}, good[1:]...), ErrUnknownType},
		{"unknown type, ignore bit", append([]byte{0xfe}, good[1:]...), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newTestFSM(t)
			before := dump(t, f)
			resp := f.Apply(rawLog(1, c.data))
			if c.want == nil {
				if resp != nil {
					t.Fatalf("resp = %#v, want nil", resp)
				}
			} else if err, _ := resp.(error); !errors.Is(err, c.want) {
				t.Fatalf("resp = %#v, want %v", resp, c.want)
			}
			if dump(t, f) != before {
				t.Fatal("bad entry changed the state")
			}
		})
	}
}

func TestApplyKnownTypeWithIgnoreBit(t *testing.T) {
	// The bit only matters for unknown types; a known type is applied.
	f := newTestFSM(t)
	data := entry(t, NodeRegisterRequestType|IgnoreUnknownTypeFlag, &structs.NodeRegisterRequest{Node: statetest.Node("a")})
	if resp := f.Apply(rawLog(1, data)); resp != nil {
		t.Fatalf("resp = %#v", resp)
	}
	if n, _ := snap(f).NodeByID(statetest.Node("a").ID); n == nil {
		t.Fatal("node not registered")
	}
}

func TestApplyNonCommandIgnored(t *testing.T) {
	f := newTestFSM(t)
	if resp := f.Apply(&raft.Log{Index: 1, Type: raft.LogConfiguration, Data: []byte{1, 2, 3}}); resp != nil {
		t.Fatalf("resp = %#v", resp)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	req := planResults500()
	data := entry(t, ApplyPlanResultsRequestType, req)
	var got structs.ApplyPlanResultsRequest
	if err := decode(data[1:], &got); err != nil {
		t.Fatal(err)
	}
	a, b := req.AllocsPlaced[7], got.AllocsPlaced[7]
	if b.Job == nil || b.Job.TaskGroups[0].Tasks[0].Config["command"] != "/bin/sleep" {
		t.Fatalf("driver config lost: %#v", b.Job.TaskGroups[0].Tasks[0].Config)
	}
	if args, ok := b.Job.TaskGroups[0].Tasks[0].Config["args"].([]any); !ok || args[0] != "3600" {
		t.Fatalf("driver args = %#v", b.Job.TaskGroups[0].Tasks[0].Config["args"])
	}
	if a.Name != b.Name || a.CreateTime != b.CreateTime || b.Job.Update.ProgressDeadline != structs.DefaultProgressDeadline {
		t.Fatalf("fields differ after round trip")
	}
	if !got.Deployment.TaskGroups["web"].RequireProgressBy.Equal(req.Deployment.TaskGroups["web"].RequireProgressBy) {
		t.Fatal("time differs after round trip")
	}
}

func FuzzApply(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0xff})
	job := statetest.Job("web", 1)
	f.Add(entry(f, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: statetest.Eval("e", job)}))
	f.Add(entry(f, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: statetest.Node("a")}))
	f.Add(entry(f, ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsPlaced: []*structs.Allocation{statetest.Alloc(job, statetest.Node("a"), "e", "d", 0)},
	}))
	f.Add(entry(f, DeploymentPromoteRequestType, &structs.DeploymentPromoteRequest{DeploymentID: "d", All: true}))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsm := New(nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			// Must not panic; an error or nil response are both fine.
			_ = fsm.Apply(rawLog(1, data))
			_ = fsm.Apply(rawLog(2, data))
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			buf := make([]byte, 1<<16)
			t.Fatalf("apply hangs on %x\n%s", data, buf[:runtime.Stack(buf, true)])
		}
	})
}
