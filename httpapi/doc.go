// Package httpapi is drover's HTTP API server: Nomad's paths and JSON
// shapes on Go's net/http ServeMux.
//
// Adding an endpoint is a few lines in the file of its resource:
//
//	func init() { register(route{"GET /v1/thing/{id}", readRoute, nsCap(acl.NamespaceCapabilityReadJob), (*Server).thing}) }
//
//	func (s *Server) thing(w http.ResponseWriter, r *http.Request) (any, error) {
//		return s.blockingRead(w, r, opts, func(ws memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) { ... })
//	}
//
// A handler returns the value to encode as JSON, or an error; errors become
// status codes through Error (a CodedError) and the sentinel errors of the
// lower packages (see statusFor). Every request body is bounded by
// MaxBodyBytes (413 beyond it); a panic in a handler becomes a 500 with a
// message.
//
// Where a request is served depends on its route's kind: writes (PUT, POST,
// DELETE) are forwarded by a follower to the leader's HTTP address, one hop,
// marked with the ForwardedHeader so that a forwarded request is never
// forwarded again. Reads of replicated state go to the leader too, unless
// the query has ?stale, which serves them from the local copy. Agent and
// status endpoints are always local. With no leader, forwarded requests
// fail with 500 "No cluster leader", as in Nomad.
//
// Blocking queries: ?index=N&wait=D on reads waits until the data's index
// exceeds N, or D has passed (default 5m, at most 10m). Responses carry
// X-Nomad-Index, X-Nomad-KnownLeader and X-Nomad-LastContact.
//
// Servers find each other with POST /v1/internal/join: the body is a
// structs.ServerJoinRequest (the caller's ID, name, Raft and HTTP
// addresses, and the servers it knows) and the answer a
// structs.ServerJoinResponse (the same from the receiving server, plus
// whether it already has Raft state and the leader's ID). The exchange
// spreads every server's (ID, Raft address, HTTP address) to all; the
// leader adds a caller that is not yet in the Raft configuration as a voter.
package httpapi
