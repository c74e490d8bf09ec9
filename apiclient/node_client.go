package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/structs"
)

// ErrNoServers: a NodeClient was given no server address.
var ErrNoServers = errors.New("no servers")

// NodeClient is a client agent's connection to the servers: the
// client endpoints (see website/api/client.md), over several server
// addresses. A call goes to the current server; on a connection error or
// a 5xx answer it moves on to the next and tries again, at most once per
// server. A 4xx answer (such as the 404 for a node the servers forgot) is
// returned at once. Safe for concurrent use.
//
// Calls go to the first address first (a client agent shuffles its
// configured list, as Nomad's clients do, so that clients given the same
// list spread over the servers); Rebalance picks the current server again
// at random (the agent calls it every few minutes), so that clients that
// moved away from a failed server come back to it once it answers.
type NodeClient struct {
	clients []*Client

	mu  sync.Mutex
	cur int
	// failed holds, for each server, when a call to it last failed.
	failed []time.Time
	// moved is closed, and replaced, whenever cur changes.
	moved chan struct{}
	// attemptTimeout is AttemptTimeout; tests shorten it.
	attemptTimeout time.Duration

	// jsonReports is set once a server refused a report in MessagePack
	// (one older than that encoding): reports go in JSON from then on.
	jsonReports atomic.Bool
	// noSync is set once a server answered allocs-sync with a 404 (one
	// older than that route): the agent reads its allocs with
	// allocs-index and allocs/get until Rebalance asks again.
	noSync atomic.Bool
}

// NewNodeClient returns a client over the given server HTTP addresses
// ("host:port" or "http://host:port").
func NewNodeClient(addrs []string) (*NodeClient, error) {
	if len(addrs) == 0 {
		return nil, ErrNoServers
	}
	n := &NodeClient{}
	for _, a := range addrs {
		c, err := New(a)
		if err != nil {
			return nil, err
		}
		n.clients = append(n.clients, c)
	}
	n.init()
	return n, nil
}

// init prepares n once its clients are set.
func (n *NodeClient) init() {
	n.failed = make([]time.Time, len(n.clients))
	n.moved = make(chan struct{})
	if n.attemptTimeout == 0 {
		n.attemptTimeout = AttemptTimeout
	}
}

// Fork returns a NodeClient over the same servers and connection pool
// with a current server of its own, picked at random: many agents in one
// process (a fleet simulator) each fork one client.
func (n *NodeClient) Fork() *NodeClient {
	f := &NodeClient{clients: n.clients, attemptTimeout: n.attemptTimeout}
	f.jsonReports.Store(n.jsonReports.Load())
	f.noSync.Store(n.noSync.Load())
	f.init()
	f.cur = rand.IntN(len(f.clients))
	return f
}

// RecentFailure is how long Rebalance passes over a server a call failed on.
const RecentFailure = time.Minute

// Rebalance makes a server picked at random the current one, leaving out
// those a call failed on within RecentFailure (unless every one did).
func (n *NodeClient) Rebalance() {
	n.noSync.Store(false)
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	ok := make([]int, 0, len(n.clients))
	for i, at := range n.failed {
		if at.IsZero() || now.Sub(at) >= RecentFailure {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		n.setCur(rand.IntN(len(n.clients)))
		return
	}
	n.setCur(ok[rand.IntN(len(ok))])
}

// Current returns the address of the server calls go to first.
func (n *NodeClient) Current() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.clients[n.cur].Address()
}

// NodeRegisterResponse answers Register.
type NodeRegisterResponse struct {
	HeartbeatTTL time.Duration
	Index        uint64
}

// NodeHeartbeatResponse answers Heartbeat.
type NodeHeartbeatResponse struct {
	HeartbeatTTL time.Duration
}

// Register registers (or re-registers) the node
// (PUT /v1/internal/node/register).
func (n *NodeClient) Register(ctx context.Context, node *structs.Node) (*NodeRegisterResponse, error) {
	var out NodeRegisterResponse
	err := n.try(ctx, nil, func(ctx context.Context, c *Client) error {
		_, err := c.Put(ctx, "/v1/internal/node/register", &structs.NodeRegisterRequest{Node: node}, &out)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Heartbeat tells the servers the node is alive
// (PUT /v1/internal/node/{id}/heartbeat). An unknown node is a 404:
// IsNotFound reports it, and the node should register again.
func (n *NodeClient) Heartbeat(ctx context.Context, nodeID string) (*NodeHeartbeatResponse, error) {
	var out NodeHeartbeatResponse
	err := n.try(ctx, nil, func(ctx context.Context, c *Client) error {
		_, err := c.Put(ctx, "/v1/internal/node/"+url.PathEscape(nodeID)+"/heartbeat", nil, &out)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Allocations returns the node's allocations with their jobs
// (GET /v1/node/{id}/allocations), blocking while q.WaitIndex is current.
func (n *NodeClient) Allocations(ctx context.Context, nodeID string, q *QueryOptions) ([]*structs.Allocation, *QueryMeta, error) {
	var out []*structs.Allocation
	var meta *QueryMeta
	err := n.try(ctx, q, func(ctx context.Context, c *Client) error {
		out = nil
		var err error
		meta, err = c.Get(ctx, "/v1/node/"+url.PathEscape(nodeID)+"/allocations", q, &out)
		return staleWithoutLeader(q, meta, err)
	})
	if err != nil {
		return nil, nil, err
	}
	return out, meta, nil
}

// NodeAllocsIndex answers AllocsIndex: the node's allocations, each with
// the index of the servers' last change to it (AllocModifyIndex).
type NodeAllocsIndex struct {
	Allocs map[string]uint64
	Index  uint64
}

// AllocsIndex returns the node's allocation IDs with their
// AllocModifyIndex (GET /v1/internal/node/{id}/allocs-index), blocking
// while q.WaitIndex is current. An unknown node has none.
func (n *NodeClient) AllocsIndex(ctx context.Context, nodeID string, q *QueryOptions) (*NodeAllocsIndex, *QueryMeta, error) {
	var out NodeAllocsIndex
	var meta *QueryMeta
	err := n.try(ctx, q, func(ctx context.Context, c *Client) error {
		out = NodeAllocsIndex{}
		var err error
		meta, err = c.doBody(ctx, http.MethodGet, "/v1/internal/node/"+url.PathEscape(nodeID)+"/allocs-index", q.values(), nil, acceptWire, &out)
		return staleWithoutLeader(q, meta, err)
	})
	if err != nil {
		return nil, nil, err
	}
	return &out, meta, nil
}

// allocsGetRequest is the body of GetAllocs.
type allocsGetRequest struct {
	AllocIDs []string
	HeldJobs []structs.JobRef `json:",omitempty"`
}

// GetAllocs returns the named allocations with their jobs, sorted by ID;
// IDs the servers do not know are left out (PUT /v1/internal/allocs/get).
// held are jobs the caller already has: the servers send an alloc of one
// of them without the job, and GetAllocs points it at the caller's copy,
// which saves sending and decoding the job again. With q.WaitIndex it
// blocks until one of them is past that index (at most q.WaitTime), so
// that a server behind the index map it answers from catches up first.
func (n *NodeClient) GetAllocs(ctx context.Context, ids []string, held []*structs.Job, q *QueryOptions) ([]*structs.Allocation, *QueryMeta, error) {
	req := &allocsGetRequest{AllocIDs: ids}
	for _, j := range held {
		req.HeldJobs = append(req.HeldJobs, j.Ref())
	}
	var out struct {
		Allocs   []*structs.Allocation
		FromHeld map[string]int
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding request: %w", err)
	}
	h := http.Header{"Content-Type": {"application/json"}, "Accept": acceptWire["Accept"]}
	var meta *QueryMeta
	err = n.try(ctx, q, func(ctx context.Context, c *Client) error {
		out.Allocs, out.FromHeld = nil, nil
		var err error
		meta, err = c.doBody(ctx, http.MethodPut, "/v1/internal/allocs/get", q.values(), body, h, &out)
		return staleWithoutLeader(q, meta, err)
	})
	if err != nil {
		return nil, nil, err
	}
	if err := pointAtHeld(out.Allocs, out.FromHeld, held); err != nil {
		return nil, nil, err
	}
	return out.Allocs, meta, nil
}

// acceptWire asks a server for a MessagePack answer (package wire): an
// alloc read's answer is half to three fifths of its JSON size and
// decodes in a third to two fifths of the time (BenchmarkAllocsAnswer); a
// server encodes either in about the same time. A server that does not
// offer it answers JSON, which the client reads as well.
var acceptWire = http.Header{"Accept": {wire.ContentType + ", application/json;q=0.9"}}

// allocUpdateRequest is the body of UpdateAllocs.
type allocUpdateRequest struct {
	Allocs []*structs.Allocation
}

// UpdateAllocs reports the client's view of its allocations
// (PUT /v1/internal/allocs/update): ID, ClientStatus, ClientDescription,
// TaskStates and DeploymentStatus of each. It returns the write's index.
//
// The report goes in MessagePack (package wire), which leaves out empty
// fields and which the servers decode in under a quarter of the time JSON
// takes; a server that answers it as a malformed body (one that reads
// only JSON) gets it again in JSON, and so does every server after it.
func (n *NodeClient) UpdateAllocs(ctx context.Context, allocs []*structs.Allocation) (uint64, error) {
	const path = "/v1/internal/allocs/update"
	req := &allocUpdateRequest{Allocs: allocs}
	var out struct{ Index uint64 }
	err := n.try(ctx, nil, func(ctx context.Context, c *Client) error {
		if !n.jsonReports.Load() {
			body, err := wire.Encode(req)
			if err != nil {
				return fmt.Errorf("encoding request: %w", err)
			}
			_, err = c.doBody(ctx, http.MethodPut, path, nil, body, http.Header{"Content-Type": {wire.ContentType}}, &out)
			if !refusedEncoding(err) {
				return err
			}
			n.jsonReports.Store(true)
		}
		_, err := c.Put(ctx, path, req, &out)
		return err
	})
	return out.Index, err
}

// refusedEncoding reports whether err is a server's refusal of a body's
// encoding: 415, or 400 for a malformed body.
func refusedEncoding(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	return se.Code == http.StatusUnsupportedMediaType ||
		se.Code == http.StatusBadRequest && strings.Contains(se.Msg, "malformed request body")
}

// AttemptTimeout bounds one call to one server, beyond a blocking read's
// own wait: a server answers a request for the leader within its forward
// hold (5 s) and a little more, with the leader's answer or "No cluster
// leader"; one that says nothing for longer is paused, or cut off
// without closing the connection, and the call moves to the next server.
const AttemptTimeout = 10 * time.Second

// ErrStaleNoLeader: a server answered a stale read while it knew no
// leader (X-Nomad-KnownLeader: false). Its copy may be cut off from the
// cluster's writes, so the call moves on to a server that knows one.
var ErrStaleNoLeader = errors.New("server answered a stale read without a known leader")

// staleWithoutLeader turns the answer to a stale read from a server that
// knows no leader into ErrStaleNoLeader.
func staleWithoutLeader(q *QueryOptions, meta *QueryMeta, err error) error {
	if err == nil && q != nil && q.AllowStale && meta != nil && meta.noLeader {
		return ErrStaleNoLeader
	}
	return err
}

// setCur makes idx the current server; the caller holds n.mu. A move
// wakes the blocking reads held by the server left (see try).
func (n *NodeClient) setCur(idx int) {
	if n.cur == idx {
		return
	}
	n.cur = idx
	close(n.moved)
	n.moved = make(chan struct{})
	if n.attemptTimeout == 0 {
		n.attemptTimeout = AttemptTimeout
	}
}

// attemptContext bounds one call of try to the server idx: AttemptTimeout,
// plus the wait of a blocking read (q). A blocking read also ends when
// the calls move away from idx (another call failed there): a server cut
// off from the leader would otherwise hold the client's watch for the
// whole wait, answering from a copy that no longer changes.
func (n *NodeClient) attemptContext(ctx context.Context, idx int, q *QueryOptions) (context.Context, context.CancelFunc) {
	timeout := n.attemptTimeout
	blocking := q != nil && q.WaitIndex > 0
	if blocking {
		wait := q.WaitTime
		if wait <= 0 {
			wait = 5 * time.Minute
		}
		timeout += wait + wait/16
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	if !blocking {
		return actx, cancel
	}
	n.mu.Lock()
	mv := n.moved
	n.mu.Unlock()
	go func() {
		for {
			select {
			case <-actx.Done():
				return
			case <-mv:
				n.mu.Lock()
				left := n.cur != idx
				mv = n.moved
				n.mu.Unlock()
				if left {
					cancel()
					return
				}
			}
		}
	}()
	return actx, cancel
}

// try calls fn on the current server, then on each next one while the
// failure is the server's (unreachable, silent past AttemptTimeout, a
// 5xx, or a stale answer without a leader), and remembers the server
// that answered. q, when not nil, is the read's query (see
// attemptContext); fn must use the context it is given.
func (n *NodeClient) try(ctx context.Context, q *QueryOptions, fn func(context.Context, *Client) error) error {
	n.mu.Lock()
	start := n.cur
	n.mu.Unlock()
	var errs []error
	for i := range n.clients {
		idx := (start + i) % len(n.clients)
		c := n.clients[idx]
		actx, cancel := n.attemptContext(ctx, idx, q)
		err := fn(actx, c)
		cancel()
		if err == nil {
			n.mu.Lock()
			n.setCur(idx)
			n.mu.Unlock()
			return nil
		}
		if ctx.Err() != nil || !retryable(err) {
			return err
		}
		errs = append(errs, fmt.Errorf("%s: %w", c.Address(), err))
		n.mu.Lock()
		n.failed[idx] = time.Now()
		if n.cur == idx {
			n.setCur((idx + 1) % len(n.clients))
		}
		n.mu.Unlock()
	}
	return errors.Join(errs...)
}

// retryable reports whether another server might answer: any failure
// that is not a 4xx answer.
func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= http.StatusInternalServerError
	}
	return !errors.Is(err, ErrUnexpectedResponse)
}
