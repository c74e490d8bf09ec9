package fsm

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// previousTags are the record tags the previous release reads, from its
// fsm/snapshot.go (`git show 31ce33e:fsm/snapshot.go`, upgrade/PREVIOUS):
// its tableTags (nodes 1, jobs 2, job versions 3, evals 4, allocs 5,
// deployments 6, index 7, autopilot 9, ACL policies 10, tokens 11, meta 12,
// scaling events 13, periodic launches 14, variables 15, root keys 16,
// services 17, job summaries 20) and allocJobTag 8. Any other tag fails
// its restore with "unknown record tag N".
var previousTags = []uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 20}

// TestSnapshotTagBuilds: every record tag names the build that introduced
// it, the previous release's tags build 1 and the others a later one.
func TestSnapshotTagBuilds(t *testing.T) {
	tags := []uint8{allocJobTag}
	for table, tag := range tableTags {
		if _, ok := tagBuilds[tag]; !ok {
			t.Errorf("table %s: tag %d has no build in tagBuilds", table, tag)
		}
		tags = append(tags, tag)
	}
	for _, tag := range tags {
		b := tagBuilds[tag]
		if slices.Contains(previousTags, tag) != (b == 1) {
			t.Errorf("tag %d: build %d, yet the previous release reads it: %v", tag, b, slices.Contains(previousTags, tag))
		}
		if b < 1 || b > structs.ServerBuild {
			t.Errorf("tag %d: build %d, this is build %d", tag, b, structs.ServerBuild)
		}
	}
	for tag := range tagBuilds {
		if !slices.Contains(tags, tag) {
			t.Errorf("tagBuilds names tag %d, which no table has", tag)
		}
	}
}

// previousReader reads a snapshot as the previous release's readSnapshot
// does: its header type (Magic and Version only), then records up to the
// first end tag, each of a tag it knows; what follows is never read. It
// returns the tags read, in order.
func previousReader(t *testing.T, b []byte) []uint8 {
	t.Helper()
	dec := codec.NewDecoder(bufio.NewReader(bytes.NewReader(b)), msgpackHandle)
	var h struct {
		Magic   string
		Version int
	}
	if err := dec.Decode(&h); err != nil || h.Magic != snapshotMagic || h.Version != 1 {
		t.Fatalf("previous build: header %+v: %v", h, err)
	}
	var tags []uint8
	for {
		var tag uint8
		if err := dec.Decode(&tag); err != nil {
			t.Fatalf("previous build: record tag: %v", err)
		}
		if tag == endTag {
			return tags
		}
		if !slices.Contains(previousTags, tag) {
			t.Fatalf("previous build: unknown record tag %d", tag)
		}
		_, obj := newRecord(tag)
		if err := dec.Decode(obj); err != nil {
			t.Fatalf("previous build: record tag %d: %v", tag, err)
		}
		tags = append(tags, tag)
	}
}

// previousLogState applies the previous release's recorded log
// (testdata/previous): a state built only from build-1 entries.
func previousLogState(t *testing.T) (*FSM, uint64) {
	t.Helper()
	f := newTestFSM(t)
	var last uint64
	for _, e := range readPrevious(t).Entries {
		last = e.Index
		if e.Type != raft.LogCommand {
			continue
		}
		resp := f.Apply(&raft.Log{Index: e.Index, Term: e.Term, Type: e.Type, Data: e.Data})
		if err, ok := resp.(error); ok && !isRejection(err) {
			t.Fatalf("entry %d (%s): %v", e.Index, MessageType(e.Data[0]), err)
		}
	}
	return f, last
}

func snapshotFor(t *testing.T, f *FSM, minBuild int) []byte {
	t.Helper()
	f.SetSnapshotMinBuild(func() int { return minBuild })
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// snapshotTags returns the tags of a snapshot's records before its first
// end tag, and of those after it.
func snapshotTags(t *testing.T, b []byte) (first, later []uint8) {
	t.Helper()
	dec := codec.NewDecoder(bytes.NewReader(b), msgpackHandle)
	var h snapshotHeader
	if err := dec.Decode(&h); err != nil {
		t.Fatal(err)
	}
	part := &first
	for {
		var tag uint8
		if err := dec.Decode(&tag); err != nil {
			t.Fatal(err)
		}
		if tag == endTag {
			if part == &later || !h.Later {
				return first, later
			}
			part = &later
			continue
		}
		var skip codec.Raw
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
		*part = append(*part, tag)
	}
}

func restoreDump(t *testing.T, b []byte) string {
	t.Helper()
	g := newTestFSM(t)
	if err := g.Restore(io.NopCloser(bytes.NewReader(b))); err != nil {
		t.Fatal(err)
	}
	return dump(t, g)
}

// TestSnapshotForPreviousBuild: the version-skew rule holds for snapshots.
// A state built from the previous release's log alone, and one that also
// holds rows only this build has (a node's pool, a namespace no object
// names, an ACL role), snapshotted while a server runs build 1 holds
// before its end tag only the tags the previous release reads, and the
// previous release's reader accepts it; the new tables' records follow the
// end tag. Written for build 2, they are before it. Either snapshot
// restores on this build to the very state it was taken from.
func TestSnapshotForPreviousBuild(t *testing.T) {
	f, last := previousLogState(t)
	check := func(name string, wantLater []uint8) {
		t.Helper()
		want := dump(t, f)

		old := snapshotFor(t, f, 1)
		read := previousReader(t, old)
		first, later := snapshotTags(t, old)
		if !slices.Equal(read, first) {
			t.Fatalf("%s: the previous build read %v, the snapshot holds %v before its end tag", name, read, first)
		}
		for _, tag := range wantLater {
			if !slices.Contains(later, tag) {
				t.Errorf("%s: minimum build 1: tag %d is not after the end tag: %v", name, tag, later)
			}
		}
		for _, tag := range later {
			if tagBuild(tag) <= 1 {
				t.Errorf("%s: minimum build 1: tag %d (build 1) after the end tag", name, tag)
			}
		}
		if got := restoreDump(t, old); got != want {
			t.Errorf("%s: the snapshot for build 1 restores another state: %s", name, firstDiff(got, want))
		}

		cur := snapshotFor(t, f, 2)
		first, later = snapshotTags(t, cur)
		if len(later) != 0 {
			t.Errorf("%s: minimum build 2: records after the end tag: %v", name, later)
		}
		for _, tag := range wantLater {
			if !slices.Contains(first, tag) {
				t.Errorf("%s: minimum build 2: no record of tag %d: %v", name, tag, first)
			}
		}
		if got := restoreDump(t, cur); got != want {
			t.Errorf("%s: the snapshot for build 2 restores another state: %s", name, firstDiff(got, want))
		}
	}
	// The store always holds the "default" namespace.
	check("previous log", []uint8{namespacesTag})

	// A build-1 entry writes a build-2 table: a node registering in an
	// unknown pool creates it. Then it leaves the pool, which stays: a
	// restore could not derive it from the nodes.
	n := statetest.Node("pooled")
	n.NodePool = "edge"
	applyOK(t, f, last+1, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	n = n.Copy()
	n.NodePool = ""
	applyOK(t, f, last+2, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	// Entries of build 2, written once every server runs it, whose rows
	// stay while a server of build 1 joins again.
	applyOK(t, f, last+3, NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{{Name: "empty", Description: "no object names it"}}})
	applyOK(t, f, last+4, ACLRoleUpsertRequestType, &structs.ACLRoleUpsertRequest{
		Roles: []*structs.ACLRole{{ID: "8a6f2d52-6c1b-4a37-9f1e-2b7c3d4e5f60", Name: "ops"}}})
	if p, _ := snap(f).NodePoolByName("edge"); p == nil {
		t.Fatal("the node's registration created no pool")
	}
	check("with build-2 rows", []uint8{namespacesTag, nodePoolsTag, aclRolesTag})
}

// TestSnapshotSkipsLaterBuildsTables: a reader skips a record after the
// end tag whose tag it does not know (a table of a build after its own),
// and restores the rest; before the end tag, such a record is an error.
func TestSnapshotSkipsLaterBuildsTables(t *testing.T) {
	f := newTestFSM(t)
	applyOK(t, f, 1, NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{{Name: "apps"}}})
	want := dump(t, f)
	s := &fsmSnapshot{snap: snap(f)}
	stream := func(unknownFirst bool) []byte {
		var buf bytes.Buffer
		enc := codec.NewEncoder(&buf, msgpackHandle)
		unknown := func() {
			_ = enc.Encode(uint8(200))
			_ = enc.Encode(map[string]any{"Name": "a later build's row", "Rows": []int{1, 2}})
		}
		_ = enc.Encode(snapshotHeader{Magic: snapshotMagic, Version: snapshotVersion, Later: true})
		refs := map[*structs.Job]uint64{}
		if err := s.writeTables(enc, refs, func(tag uint8) bool { return tagBuild(tag) <= 1 }); err != nil {
			t.Fatal(err)
		}
		if unknownFirst {
			unknown()
		}
		_ = enc.Encode(uint8(endTag))
		unknown()
		if err := s.writeTables(enc, refs, func(tag uint8) bool { return tagBuild(tag) > 1 }); err != nil {
			t.Fatal(err)
		}
		unknown()
		_ = enc.Encode(uint8(endTag))
		return buf.Bytes()
	}
	if got := restoreDump(t, stream(false)); got != want {
		t.Fatalf("restored: %s", firstDiff(got, want))
	}
	g := newTestFSM(t)
	if err := g.Restore(io.NopCloser(bytes.NewReader(stream(true)))); err == nil {
		t.Fatal("an unknown tag before the end tag was restored")
	}
}
