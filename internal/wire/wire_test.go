package wire

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

type report struct {
	Allocs []*structs.Allocation
}

// A body that claims huge containers is an error, without allocating what
// it claims (a report's body is untrusted input).
func TestDecodeBoundsClaimedLengths(t *testing.T) {
	for name, b := range map[string][]byte{
		"array32":           {0x81, 0xa6, 'A', 'l', 'l', 'o', 'c', 's', 0xdd, 0xff, 0xff, 0xff, 0xff},
		"map32 in an alloc": {0x81, 0xa6, 'A', 'l', 'l', 'o', 'c', 's', 0x91, 0xdf, 0xff, 0xff, 0xff, 0xff},
		"str32":             {0x81, 0xa6, 'A', 'l', 'l', 'o', 'c', 's', 0x91, 0x81, 0xa2, 'I', 'D', 0xdb, 0xff, 0xff, 0xff, 0xff},
		"bin32":             {0x81, 0xa6, 'A', 'l', 'l', 'o', 'c', 's', 0x91, 0x81, 0xa2, 'I', 'D', 0xc6, 0xff, 0xff, 0xff, 0xff},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		var r report
		err := Decode(b, &r)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, r)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("%s: allocated %d MB for a %d-byte body", name, grew>>20, len(b))
		}
		t.Logf("%s: %v in %v", name, err, time.Since(start))
	}
}

// Fields left out when empty come back as they were.
func TestRoundTrip(t *testing.T) {
	healthy := true
	in := &report{Allocs: []*structs.Allocation{{
		ID: "a", ClientStatus: "running",
		TaskStates:       map[string]*structs.TaskState{"web": {State: "running", Events: []*structs.TaskEvent{}}},
		DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: time.Unix(5, 0).UTC()},
	}}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	var out report
	if err := Decode(b, &out); err != nil {
		t.Fatal(err)
	}
	a := out.Allocs[0]
	if a.ID != "a" || a.ClientStatus != "running" || a.TaskStates["web"].Events == nil ||
		!*a.DeploymentStatus.Healthy || !a.DeploymentStatus.Timestamp.Equal(time.Unix(5, 0)) {
		t.Fatalf("decoded %+v", a)
	}
}

func FuzzDecode(f *testing.F) {
	b, _ := Encode(&report{Allocs: []*structs.Allocation{{ID: "a", ClientStatus: "running"}}})
	f.Add(b)
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r report
		_ = Decode(b, &r)
	})
}

// running28 is a client's report of 28 allocations turned running and
// healthy, each with one task and its three events.
func running28() *report {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	healthy := true
	r := &report{}
	for i := range 28 {
		t := t0.UnixNano() + int64(i)
		r.Allocs = append(r.Allocs, &structs.Allocation{
			ID: fmt.Sprintf("b74a021e-693c-492e-a51d-48307b7c%04d", i), ClientStatus: structs.AllocClientStatusRunning,
			ClientDescription: "Tasks are running",
			TaskStates: map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning, StartedAt: t0,
				Events: []*structs.TaskEvent{
					{Type: structs.TaskReceived, Time: t, Message: "Task received by client", DisplayMessage: "Task received by client"},
					{Type: structs.TaskSetup, Time: t + 1, Message: "Building Task Directory", DisplayMessage: "Building Task Directory"},
					{Type: structs.TaskStarted, Time: t + 2, Message: "Task started by client", DisplayMessage: "Task started by client"},
				}}},
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: t0},
		})
	}
	return r
}

// BenchmarkDecodeReport decodes a client's report of 28 allocations as
// the server does, in each encoding a client may send.
func BenchmarkDecodeReport(b *testing.B) {
	for _, c := range []struct {
		name   string
		encode func(any) ([]byte, error)
		decode func([]byte, any) error
	}{
		{"msgpack", Encode, Decode},
		{"json", json.Marshal, json.Unmarshal},
	} {
		b.Run(c.name, func(b *testing.B) {
			body, err := c.encode(running28())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				var r report
				if err := c.decode(body, &r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(body)), "bytes/report")
		})
	}
}

// BenchmarkEncode encodes a client's report of 28 allocations, as a
// client sends it and as the leader writes it to the log.
func BenchmarkEncode(b *testing.B) {
	r := running28()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(r); err != nil {
			b.Fatal(err)
		}
	}
}
