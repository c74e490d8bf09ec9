package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// A follower may commit only what the leader's request has shown to
// match the leader's log: Raft sets a follower's commit index to the
// smaller of the leader's and "the index of the last new entry". The raft
// library takes the smaller of the leader's and the follower's own last
// index instead (raft.go, appendEntries, "Update the commit index"). The
// two differ when the follower holds entries past the ones the request
// carried that the request did not check: a server that was leader and
// appended entries of its own term that never reached a quorum, then
// receives from the new leader a request whose entries all match its log
// (the part the two share) while the new leader's commit index is past
// them. The follower then applies its own stale entries in place of the
// committed ones at the same indexes, and its state differs from the
// others' for good.
//
// commitClamp applies the paper's rule on the way in: each AppendEntries
// request reaching this server has its LeaderCommitIndex lowered to the
// last index the request vouches for (PrevLogEntry plus its entries). A
// leader's requests come in order and carry its commit index again and
// again, so the follower still learns the commit index, from the request
// that reaches it; nothing it does not match is applied.
//
// The clamp sits in the transport because the rule is the library's: the
// transport is the one place drover sees every request before raft does.
func clampCommitIndex(a *raft.AppendEntriesRequest) {
	if vouched := a.PrevLogEntry + uint64(len(a.Entries)); a.LeaderCommitIndex > vouched {
		a.LeaderCommitIndex = vouched
	}
}

// clampedTransport hands raft the wrapped transport's RPCs with every
// AppendEntries request clamped (clampCommitIndex). Heartbeats, which the
// network transport hands to its fast path, carry no commit index and are
// left as they are.
type clampedTransport struct {
	raft.Transport
	out  chan raft.RPC
	done chan struct{}
	once sync.Once
}

// clampedPreVoteTransport is a clampedTransport over a transport that
// supports pre-vote, and says so to raft.
type clampedPreVoteTransport struct {
	*clampedTransport
}

func (t clampedPreVoteTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return t.Transport.(raft.WithPreVote).RequestPreVote(id, target, args, resp)
}

// clampCommits wraps trans (see clampedTransport).
func clampCommits(trans raft.Transport) raft.Transport {
	t := &clampedTransport{Transport: trans, out: make(chan raft.RPC), done: make(chan struct{})}
	go t.pump(trans.Consumer())
	if _, ok := trans.(raft.WithPreVote); ok {
		return clampedPreVoteTransport{t}
	}
	return t
}

func (t *clampedTransport) pump(in <-chan raft.RPC) {
	for {
		select {
		case rpc := <-in:
			if a, ok := rpc.Command.(*raft.AppendEntriesRequest); ok {
				clampCommitIndex(a)
			}
			select {
			case t.out <- rpc:
			case <-t.done:
				return
			}
		case <-t.done:
			return
		}
	}
}

// Consumer returns the clamped RPCs.
func (t *clampedTransport) Consumer() <-chan raft.RPC { return t.out }

// Close stops the clamping and closes the wrapped transport when it can
// be (raft.WithClose), as raft does on shutdown.
func (t *clampedTransport) Close() error {
	t.once.Do(func() { close(t.done) })
	if c, ok := t.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}
