package httpapi

import (
	"errors"
	"fmt"
	"net/http"
)

// DELETE /v1/operator/raft/peer?id=ID or ?address=HOST:PORT removes a
// server from the Raft configuration, as Nomad's endpoint: the way to
// drop a dead server that will not come back, before its replacement
// joins. The leader does it (a write route); the answer is an empty 200.
// A leader asked to remove itself first hands its leadership to another
// voter (the backend answers ErrHandedOver), then sends the request on to
// the new leader, which removes it: the cluster is not left to notice that
// its leader went and elect another.

// ErrHandedOver: the leader asked to remove itself handed its leadership
// over; the new leader is to remove it.
var ErrHandedOver = errors.New("this server handed its leadership over before its removal")

func init() {
	register(route{"DELETE /v1/operator/raft/peer", writeRoute, operatorWrite, (*Server).raftRemovePeer})
}

func (s *Server) raftRemovePeer(w http.ResponseWriter, r *http.Request) (any, error) {
	b, ok := s.backend.(RaftPeerBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: removing Raft peers unavailable")
	}
	q := r.URL.Query()
	id, addr := q.Get("id"), q.Get("address")
	switch {
	case id == "" && addr == "":
		return nil, Errorf(http.StatusBadRequest, "must specify either ?id or ?address")
	case id != "" && addr != "":
		return nil, Errorf(http.StatusBadRequest, "must specify ?id or ?address, not both")
	}
	if err := b.RemoveRaftPeer(r.Context(), id, addr); err != nil {
		if errors.Is(err, ErrHandedOver) {
			// The new leader removes this server.
			if s.toLeader(w, r) {
				return written{}, nil
			}
			return nil, Errorf(http.StatusInternalServerError, "%w; this server leads again: retry", err)
		}
		if errors.Is(err, ErrPeerNotFound) {
			// Nomad's words.
			if id != "" {
				return nil, &CodedError{Code: http.StatusNotFound, Msg: fmt.Sprintf("id %q was not found in the Raft configuration", id), Err: err}
			}
			return nil, &CodedError{Code: http.StatusNotFound, Msg: fmt.Sprintf("address %q was not found in the Raft configuration", addr), Err: err}
		}
		return nil, err
	}
	w.WriteHeader(http.StatusOK)
	return written{}, nil
}
