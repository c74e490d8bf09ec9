package httpapi

import "net/http"

func init() {
	register(
		route{"GET /v1/status/leader", localRoute, public, (*Server).statusLeader},
		route{"GET /v1/status/peers", localRoute, public, (*Server).statusPeers},
	)
}

// statusLeader answers the leader's Raft address, "" when there is none.
func (s *Server) statusLeader(_ http.ResponseWriter, _ *http.Request) (any, error) {
	addr, _ := s.backend.Leader()
	return addr, nil
}

// statusPeers answers the Raft addresses of the voters.
func (s *Server) statusPeers(_ http.ResponseWriter, _ *http.Request) (any, error) {
	cfg, err := s.backend.RaftConfiguration()
	if err != nil {
		return nil, err
	}
	peers := []string{}
	for _, srv := range cfg.Servers {
		if srv.Voter {
			peers = append(peers, srv.Address)
		}
	}
	return peers, nil
}
