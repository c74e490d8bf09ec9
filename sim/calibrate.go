package sim

import (
	"crypto/sha256"
	"encoding/json"
	"time"
)

// calibrationRuns is how often the calibration workload runs; the
// fastest run counts, the others absorb a busy moment.
const calibrationRuns = 3

// Calibrate times a fixed CPU-bound workload on one goroutine (JSON
// encoding and decoding, and hashing, as the servers and clients do) and
// returns the fastest of a few runs in milliseconds. The same build on
// the same machine gives about the same figure when nothing else runs; a
// higher one means a slower machine, or a slower hour on a shared one,
// so that results measured at different times can be compared.
func Calibrate() float64 {
	best := time.Duration(0)
	for range calibrationRuns {
		start := time.Now()
		calibrationWork()
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	return round(float64(best.Microseconds()) / 1000)
}

// calibrationDoc is a small nested document, shaped like an alloc's
// task states.
type calibrationDoc struct {
	ID     string
	Status string
	Tasks  map[string][]calibrationEvent
}

type calibrationEvent struct {
	Type    string
	Time    int64
	Message string
	Details map[string]string
}

// calibrationWork encodes and decodes 2,000 documents and hashes 16 MB.
func calibrationWork() {
	doc := calibrationDoc{ID: "5d1c0e6e-1a2b-4c3d-9e8f-0a1b2c3d4e5f", Status: "running", Tasks: map[string][]calibrationEvent{}}
	for _, task := range []string{"web", "sidecar"} {
		for i, typ := range []string{"Received", "Task Setup", "Started"} {
			doc.Tasks[task] = append(doc.Tasks[task], calibrationEvent{
				Type: typ, Time: int64(i) * 1e9, Message: "the task's event " + typ,
				Details: map[string]string{"attempt": "1", "kind": typ},
			})
		}
	}
	for range 2000 {
		b, err := json.Marshal(&doc)
		if err != nil {
			panic(err) // a fixed, encodable value
		}
		var back calibrationDoc
		if err := json.Unmarshal(b, &back); err != nil {
			panic(err)
		}
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	h := sha256.New()
	for range 16 {
		h.Write(buf)
	}
	_ = h.Sum(nil)
}
