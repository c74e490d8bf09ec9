package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// The transport drover hands to raft wraps the TCP (or TLS, or in-memory)
// one to correct two faults of the raft library's own that the fault
// injection suite found (robustness/, website/reliability.md): a follower
// committing entries the leader's request did not vouch for
// (clampCommitIndex), and a leader's pipelined replication to a follower
// stalling for good after the follower refused one request
// (drainedPipeline).

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
// clampCommitIndex applies the paper's rule on the way in: each AppendEntries
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

// guardedTransport hands raft the wrapped transport's RPCs with every
// AppendEntries request clamped (clampCommitIndex), and its pipelines
// drained (drainedPipeline). Heartbeats, which the network transport hands
// to its fast path, carry no commit index and are left as they are.
type guardedTransport struct {
	raft.Transport
	out  chan raft.RPC
	done chan struct{}
	once sync.Once
}

// guardedPreVoteTransport is a guardedTransport over a transport that
// supports pre-vote, and says so to raft.
type guardedPreVoteTransport struct {
	*guardedTransport
}

func (t guardedPreVoteTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return t.Transport.(raft.WithPreVote).RequestPreVote(id, target, args, resp)
}

// guardTransport wraps trans (see guardedTransport).
func guardTransport(trans raft.Transport) raft.Transport {
	t := &guardedTransport{Transport: trans, out: make(chan raft.RPC), done: make(chan struct{})}
	go t.pump(trans.Consumer())
	if _, ok := trans.(raft.WithPreVote); ok {
		return guardedPreVoteTransport{t}
	}
	return t
}

func (t *guardedTransport) pump(in <-chan raft.RPC) {
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
func (t *guardedTransport) Consumer() <-chan raft.RPC { return t.out }

// Close stops the clamping and closes the wrapped transport when it can
// be (raft.WithClose), as raft does on shutdown.
func (t *guardedTransport) Close() error {
	t.once.Do(func() { close(t.done) })
	if c, ok := t.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}

// AppendEntriesPipeline returns the wrapped transport's pipeline, drained.
func (t *guardedTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.Transport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	return newDrainedPipeline(p), nil
}

// drainedPipeline keeps reading a pipeline's answers whether raft does or
// not. raft's leader stops reading a follower's pipeline at the first
// answer that is not a success (a follower that could not store the
// entries: a full disk) and stops sending only when its sending loop next
// looks, which may be after one or two more requests. The network
// transport's pipeline, with its default of two requests in flight, hands
// answers over unbuffered: the answer nobody reads blocks its decoder, the
// next request blocks on the decoder, and the sending loop, which is the
// one that would close the pipeline, waits for ever. Heartbeats go on (they
// have a path of their own), so the follower never times out and starts an
// election that would end it: it simply never gets another entry from this
// leader (the follower that did not catch up after a full disk in the
// chaos runs). The drain takes every answer as it comes and queues it for
// raft; the queue holds only the answers raft did not read between its
// last read and the close, one or two.
type drainedPipeline struct {
	raft.AppendPipeline
	out  chan raft.AppendFuture
	done chan struct{}
	once sync.Once
}

func newDrainedPipeline(p raft.AppendPipeline) *drainedPipeline {
	d := &drainedPipeline{AppendPipeline: p, out: make(chan raft.AppendFuture), done: make(chan struct{})}
	go d.drain(p.Consumer())
	return d
}

func (d *drainedPipeline) drain(in <-chan raft.AppendFuture) {
	var queue []raft.AppendFuture
	for {
		var out chan raft.AppendFuture
		var next raft.AppendFuture
		if len(queue) > 0 {
			out, next = d.out, queue[0]
		}
		select {
		case f := <-in:
			queue = append(queue, f)
		case out <- next:
			queue[0] = nil
			queue = queue[1:]
		case <-d.done:
			return
		}
	}
}

// Consumer returns the answers, in the order they came.
func (d *drainedPipeline) Consumer() <-chan raft.AppendFuture { return d.out }

// Close stops the drain and closes the wrapped pipeline.
func (d *drainedPipeline) Close() error {
	d.once.Do(func() { close(d.done) })
	return d.AppendPipeline.Close()
}
