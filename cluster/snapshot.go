package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// ErrSnapshotArchive: a snapshot archive given to RestoreSnapshot is not
// one written by SaveSnapshot, or is damaged (truncated, checksum
// mismatch). Nothing was restored.
var ErrSnapshotArchive = errors.New("invalid snapshot archive")

// Snapshot archive layout: a gzip-compressed tar holding, in this order,
//
//	meta.json    the Raft snapshot's metadata (ID, index, term, size)
//	state.bin    the state machine's snapshot stream (see fsm.FSM.Snapshot)
//	SHA256SUMS   "<hex>  <name>" for meta.json and state.bin
//
// The same layout as Nomad's and Consul's archives, so that the usual
// tools (tar, sha256sum) can inspect a backup.
const (
	archiveMeta  = "meta.json"
	archiveState = "state.bin"
	archiveSums  = "SHA256SUMS"
)

// restoreTimeout bounds a snapshot restore through Raft.
const restoreTimeout = 2 * time.Minute

// SnapshotInfo describes a saved snapshot.
type SnapshotInfo struct {
	ID    string
	Index uint64
	Term  uint64
	Size  int64
}

// SaveSnapshot takes a snapshot of the replicated state through Raft (a
// consistent cut at a log index; it also lets Raft compact its log) and
// writes it to w as a snapshot archive. It works on any server; the
// snapshot is of that server's applied state.
func (s *Server) SaveSnapshot(w io.Writer) (*SnapshotInfo, error) {
	f := s.raft.Snapshot()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("taking snapshot: %w", translate(err))
	}
	meta, rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("opening snapshot: %w", err)
	}
	defer rc.Close()
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encoding snapshot metadata: %w", err)
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	now := time.Now()
	sums := &strings.Builder{}
	metaSum := sha256.Sum256(metaJSON)
	if err := writeTarFile(tw, archiveMeta, int64(len(metaJSON)), now, bytes.NewReader(metaJSON)); err != nil {
		return nil, err
	}
	fmt.Fprintf(sums, "%s  %s\n", hex.EncodeToString(metaSum[:]), archiveMeta)
	h := sha256.New()
	if err := writeTarFile(tw, archiveState, meta.Size, now, io.TeeReader(rc, h)); err != nil {
		return nil, err
	}
	fmt.Fprintf(sums, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), archiveState)
	if err := writeTarFile(tw, archiveSums, int64(sums.Len()), now, strings.NewReader(sums.String())); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("writing snapshot archive: %w", err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("writing snapshot archive: %w", err)
	}
	return &SnapshotInfo{ID: meta.ID, Index: meta.Index, Term: meta.Term, Size: meta.Size}, nil
}

func writeTarFile(tw *tar.Writer, name string, size int64, mtime time.Time, r io.Reader) error {
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: mtime, Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("writing snapshot archive: %w", err)
	}
	n, err := io.Copy(tw, r)
	if err != nil {
		return fmt.Errorf("writing snapshot archive %s: %w", name, err)
	}
	if n != size {
		return fmt.Errorf("writing snapshot archive %s: wrote %d bytes, want %d", name, n, size)
	}
	return nil
}

// RestoreSnapshot reads a snapshot archive written by SaveSnapshot,
// checks it, and restores it through Raft: the leader's state machine
// takes the snapshot's state and every other server receives it as an
// installed snapshot, keeping the current Raft configuration. Leader only
// (ErrNotLeader elsewhere). It is for disaster recovery: every write since
// the snapshot is lost.
func (s *Server) RestoreSnapshot(r io.Reader) (*SnapshotInfo, error) {
	meta, state, err := readArchive(r)
	if err != nil {
		return nil, err
	}
	defer func() {
		state.Close()
		os.Remove(state.Name())
	}()
	if err := s.raft.Restore(meta, state, restoreTimeout); err != nil {
		return nil, fmt.Errorf("restoring snapshot: %w", translate(err))
	}
	return &SnapshotInfo{ID: meta.ID, Index: meta.Index, Term: meta.Term, Size: meta.Size}, nil
}

// readArchive checks an archive and returns its metadata and its state
// stream, spooled to a temporary file the caller closes and removes.
func readArchive(r io.Reader) (meta *raft.SnapshotMeta, state *os.File, err error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrSnapshotArchive, err)
	}
	tmp, err := os.CreateTemp("", "drover-restore-*.bin")
	if err != nil {
		return nil, nil, fmt.Errorf("spooling snapshot: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	tr := tar.NewReader(gz)
	got := map[string]string{}
	var metaJSON []byte
	var sums string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrSnapshotArchive, err)
		}
		h := sha256.New()
		switch hdr.Name {
		case archiveMeta:
			if metaJSON, err = io.ReadAll(io.TeeReader(io.LimitReader(tr, 1<<20), h)); err != nil {
				return nil, nil, fmt.Errorf("%w: %s: %w", ErrSnapshotArchive, hdr.Name, err)
			}
		case archiveState:
			if _, err := io.Copy(io.MultiWriter(tmp, h), tr); err != nil {
				return nil, nil, fmt.Errorf("%w: %s: %w", ErrSnapshotArchive, hdr.Name, err)
			}
		case archiveSums:
			b, err := io.ReadAll(io.LimitReader(tr, 1<<16))
			if err != nil {
				return nil, nil, fmt.Errorf("%w: %s: %w", ErrSnapshotArchive, hdr.Name, err)
			}
			sums = string(b)
			continue
		default:
			return nil, nil, fmt.Errorf("%w: unexpected file %q", ErrSnapshotArchive, hdr.Name)
		}
		got[hdr.Name] = hex.EncodeToString(h.Sum(nil))
	}
	if err := checkSums(sums, got); err != nil {
		return nil, nil, err
	}
	meta = &raft.SnapshotMeta{}
	if err := json.Unmarshal(metaJSON, meta); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrSnapshotArchive, archiveMeta, err)
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, nil, fmt.Errorf("spooling snapshot: %w", err)
	}
	if size != meta.Size {
		return nil, nil, fmt.Errorf("%w: state is %d bytes, metadata says %d", ErrSnapshotArchive, size, meta.Size)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, nil, fmt.Errorf("spooling snapshot: %w", err)
	}
	return meta, tmp, nil
}

// checkSums compares the SHA256SUMS file with the digests computed while
// reading; both files must be present and listed.
func checkSums(sums string, got map[string]string) error {
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(sums), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if ok {
			want[name] = sum
		}
	}
	for _, name := range []string{archiveMeta, archiveState} {
		switch {
		case got[name] == "":
			return fmt.Errorf("%w: %s missing", ErrSnapshotArchive, name)
		case want[name] == "":
			return fmt.Errorf("%w: no checksum for %s", ErrSnapshotArchive, name)
		case want[name] != got[name]:
			return fmt.Errorf("%w: checksum mismatch for %s", ErrSnapshotArchive, name)
		}
	}
	return nil
}
