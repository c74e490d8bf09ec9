package httpapi

import "net/http"

func init() {
	register(route{"GET /v1/operator/raft/configuration", localRoute, operatorRead, (*Server).raftConfiguration})
}

func (s *Server) raftConfiguration(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return s.backend.RaftConfiguration()
}
