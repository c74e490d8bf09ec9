package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/droverhq/drover/cluster"
)

// GET /v1/operator/snapshot streams a snapshot archive of the replicated
// state (a gzip'd tar: meta.json, state.bin, SHA256SUMS; see
// cluster.Server.SaveSnapshot). It is a read: the leader answers, or with
// ?stale the receiving server from its own copy.
//
// PUT /v1/operator/snapshot restores an archive from the request body
// through Raft, so every server takes its state; the leader does it. The
// body is bounded by MaxBodyBytes like every request's.

func init() {
	register(
		route{"GET /v1/operator/snapshot", readRoute, management, (*Server).snapshotSave},
		route{"PUT /v1/operator/snapshot", writeRoute, management, (*Server).snapshotRestore},
	)
}

func (s *Server) snapshotBackend() (SnapshotBackend, error) {
	b, ok := s.backend.(SnapshotBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: snapshots unavailable")
	}
	return b, nil
}

func (s *Server) snapshotSave(w http.ResponseWriter, _ *http.Request) (any, error) {
	b, err := s.snapshotBackend()
	if err != nil {
		return nil, err
	}
	lw := &lazyWriter{w: w}
	if _, err := b.SaveSnapshot(lw); err != nil {
		if !lw.started {
			return nil, err
		}
		// The archive is partly sent: only a broken connection tells the
		// client it is incomplete (a gzip reader then fails too).
		s.logger.Error("snapshot stream failed", "error", err)
		panic(http.ErrAbortHandler)
	}
	if !lw.started {
		lw.start()
	}
	return written{}, nil
}

// lazyWriter sends the archive's headers with its first bytes, so that an
// error before anything is written still becomes an error answer.
type lazyWriter struct {
	w       http.ResponseWriter
	started bool
}

func (l *lazyWriter) start() {
	l.started = true
	l.w.Header().Set("Content-Type", "application/octet-stream")
	l.w.Header().Set("Content-Disposition", `attachment; filename="drover-snapshot.snap"`)
	l.w.WriteHeader(http.StatusOK)
}

func (l *lazyWriter) Write(p []byte) (int, error) {
	if !l.started {
		l.start()
	}
	return l.w.Write(p)
}

// snapshotRestoreResponse is the answer of a restore.
type snapshotRestoreResponse struct {
	SnapshotIndex uint64
	SnapshotTerm  uint64
}

func (s *Server) snapshotRestore(w http.ResponseWriter, r *http.Request) (any, error) {
	b, err := s.snapshotBackend()
	if err != nil {
		return nil, err
	}
	info, err := b.RestoreSnapshot(r.Body)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, Errorf(http.StatusRequestEntityTooLarge, "snapshot larger than %d bytes: %w", MaxBodyBytes, err)
	case errors.Is(err, cluster.ErrSnapshotArchive):
		return nil, Errorf(http.StatusBadRequest, "%w", err)
	case err != nil:
		return nil, err
	}
	idx, _ := s.backend.State().Snapshot().LatestIndex()
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(idx, 10))
	return snapshotRestoreResponse{SnapshotIndex: info.Index, SnapshotTerm: info.Term}, nil
}
