package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"testing"
)

func TestSnapshotSaveAndRestoreReachesEveryServer(t *testing.T) {
	nodes := newTestCluster(t, 3)
	leader := waitLeader(t, nodes)
	ctx := context.Background()
	for _, e := range []string{"one", "two"} {
		if _, _, err := leader.srv.ApplyBytes(ctx, []byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	var archive bytes.Buffer
	info, err := leader.srv.SaveSnapshot(&archive)
	if err != nil {
		t.Fatalf("SaveSnapshot: %v", err)
	}
	if info.Index == 0 || info.Size == 0 {
		t.Fatalf("snapshot info %+v", info)
	}
	if _, _, err := leader.srv.ApplyBytes(ctx, []byte("three")); err != nil {
		t.Fatal(err)
	}
	for _, nd := range nodes {
		waitFor(t, "three entries", func() bool { return nd.fsm.len() == 3 })
	}

	for _, nd := range nodes {
		if nd != leader {
			_, err := nd.srv.RestoreSnapshot(bytes.NewReader(archive.Bytes()))
			if !errors.Is(err, ErrNotLeader) {
				t.Fatalf("restore on a follower: %v, want ErrNotLeader", err)
			}
		}
	}
	if _, err := leader.srv.RestoreSnapshot(bytes.NewReader(archive.Bytes())); err != nil {
		t.Fatalf("RestoreSnapshot: %v", err)
	}
	for _, nd := range nodes {
		waitFor(t, "the restored state on "+nd.srv.ID(), func() bool { return nd.fsm.len() == 2 })
	}
	// Writes go on after the restore.
	if _, _, err := leader.srv.ApplyBytes(ctx, []byte("four")); err != nil {
		t.Fatal(err)
	}
	for _, nd := range nodes {
		waitFor(t, "a write after the restore", func() bool { return nd.fsm.len() == 3 })
	}
}

func TestRestoreRejectsDamagedArchives(t *testing.T) {
	nodes := newTestCluster(t, 1)
	leader := nodes[0]
	if _, _, err := leader.srv.ApplyBytes(context.Background(), []byte("one")); err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	if _, err := leader.srv.SaveSnapshot(&archive); err != nil {
		t.Fatal(err)
	}
	good := archive.Bytes()

	// Rewrite the archive with the state's bytes changed.
	tampered := rewriteArchive(t, good, func(name string, b []byte) []byte {
		if name == archiveState && len(b) > 0 {
			b = append([]byte(nil), b...)
			b[0] ^= 0xff
		}
		return b
	})
	cases := map[string][]byte{
		"not gzip":  []byte("hello"),
		"truncated": good[:len(good)/2],
		"tampered":  tampered,
		"no sums": rewriteArchive(t, good, func(name string, b []byte) []byte {
			if name == archiveSums {
				return nil
			}
			return b
		}),
	}
	for name, data := range cases {
		if _, err := leader.srv.RestoreSnapshot(bytes.NewReader(data)); !errors.Is(err, ErrSnapshotArchive) {
			t.Errorf("%s: error %v, want ErrSnapshotArchive", name, err)
		}
	}
	if nodes[0].fsm.len() != 1 {
		t.Fatalf("state changed by a rejected restore: %d entries", nodes[0].fsm.len())
	}
}

// rewriteArchive returns the archive with each file passed through edit;
// a nil result drops the file.
func rewriteArchive(t *testing.T, archive []byte, edit func(name string, b []byte) []byte) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out bytes.Buffer
	gw := gzip.NewWriter(&out)
	tw := tar.NewWriter(gw)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if b = edit(hdr.Name, b); b == nil {
			continue
		}
		hdr.Size = int64(len(b))
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
