package fsm

import (
	"bufio"
	"bytes"
	"reflect"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/droverhq/drover/structs"
)

// withoutTag re-encodes the snapshot stream in b without the records of
// tag: a snapshot as a build that did not write them would have.
func withoutTag(t *testing.T, b []byte, tag uint8) (out []byte, dropped int) {
	t.Helper()
	dec := codec.NewDecoder(bytes.NewReader(b), msgpackHandle)
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	enc := codec.NewEncoder(bw, msgpackHandle)
	var h snapshotHeader
	if err := dec.Decode(&h); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode(h); err != nil {
		t.Fatal(err)
	}
	for {
		var tg uint8
		if err := dec.Decode(&tg); err != nil {
			t.Fatal(err)
		}
		if tg == endTag {
			break
		}
		_, obj := newRecord(tg)
		if err := dec.Decode(obj); err != nil {
			t.Fatal(err)
		}
		if tg == tag {
			dropped++
			continue
		}
		if err := enc.Encode(tg); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Encode(uint8(endTag)); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), dropped
}

// TestRestoreCountsMissingJobSummaries: a snapshot written before the
// store kept job summaries (no records of their tag) is restored with
// every job's summary and basis counted from the restored state, equal to
// the kept ones but for ModifyIndex; and the restored store keeps them
// from there.
func TestRestoreCountsMissingJobSummaries(t *testing.T) {
	a, _ := mixedLog(t, 300)
	var buf bytes.Buffer
	fs, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	old, dropped := withoutTag(t, buf.Bytes(), jobSummaryTag)
	jobs, err := snap(a).Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if dropped == 0 || dropped != len(jobs) {
		t.Fatalf("dropped %d summary records for %d jobs", dropped, len(jobs))
	}
	b := newTestFSM(t)
	if err := b.Restore(nopCloser{bytes.NewReader(old)}); err != nil {
		t.Fatal(err)
	}
	var counted int
	for _, j := range jobs {
		want, err := snap(a).JobSummaryByID(j.Namespace, j.ID)
		if err != nil || want == nil {
			t.Fatalf("job %s: no kept summary (%v)", j.ID, err)
		}
		got, err := snap(b).JobSummaryByID(j.Namespace, j.ID)
		if err != nil || got == nil {
			t.Fatalf("job %s: no restored summary (%v)", j.ID, err)
		}
		w, g := *want, *got
		w.ModifyIndex, g.ModifyIndex = 0, 0
		if !reflect.DeepEqual(w, g) {
			t.Fatalf("job %s: restored summary %+v, kept %+v", j.ID, g, w)
		}
		wb, _ := snap(a).JobSummaryBasisByID(j.Namespace, j.ID)
		gb, _ := snap(b).JobSummaryBasisByID(j.Namespace, j.ID)
		if wb == nil || gb == nil || *wb != *gb {
			t.Fatalf("job %s: restored basis %+v, kept %+v", j.ID, gb, wb)
		}
		for _, c := range g.Summary {
			counted += c.Running + c.Starting + c.Complete + c.Failed + c.Lost + c.Unknown
		}
	}
	if counted == 0 {
		t.Fatal("no summary counts an allocation: the test would prove little")
	}
	// The restored store keeps the summaries from its own rows.
	applyOK(t, b, 100000, JobDeregisterRequestType, &structs.JobDeregisterRequest{Namespace: jobs[0].Namespace, JobID: jobs[0].ID, Purge: true})
	sums, err := snap(b).JobSummaries()
	if err != nil || len(sums) != len(jobs)-1 {
		t.Fatalf("after a purge: %d summaries for %d jobs (%v)", len(sums), len(jobs)-1, err)
	}
}
