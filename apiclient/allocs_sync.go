package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/structs"
)

// ErrSyncUnsupported: the servers do not offer allocs-sync (they answered
// its route 404 or 405). The caller reads the node's allocs with
// AllocsIndex and GetAllocs instead.
var ErrSyncUnsupported = errors.New("the servers do not offer allocs-sync")

// NodeAllocsSync answers AllocsSync.
type NodeAllocsSync struct {
	// Allocs maps each of the node's allocs to its AllocModifyIndex.
	Allocs map[string]uint64
	// Changed are the allocs whose index is past the request's since,
	// each with its job (the caller's copy when it held that version),
	// without their task states, metrics and state changes.
	Changed []*structs.Allocation
	// KnownCurrent: the servers matched the request's known digest, and
	// Allocs is nil: the node's allocs are the caller's at or below
	// since, and Changed.
	KnownCurrent bool
}

// allocsSyncRequest is the body of AllocsSync.
type allocsSyncRequest struct {
	Since    uint64
	HeldJobs []structs.JobRef     `codec:",omitempty" json:",omitempty"`
	Known    structs.AllocsDigest `codec:",omitempty" json:",omitempty"`
}

// AllocsSync reads the node's allocs index and the allocs the servers
// changed after since in one round trip
// (PUT /v1/internal/node/{id}/allocs-sync), blocking while q.WaitIndex is
// current. held are the jobs the caller already has: an alloc of one of
// them comes without its job and is pointed at the caller's copy. known,
// when not 0, is the digest of the allocs the caller holds at or below
// since: when the servers hold the same there, they leave the index map
// out (KnownCurrent). The
// request and the answer are MessagePack. A server older than the route
// is answered with ErrSyncUnsupported, and so is every call after it
// until Rebalance.
func (n *NodeClient) AllocsSync(ctx context.Context, nodeID string, since uint64, known structs.AllocsDigest, held []*structs.Job, q *QueryOptions) (*NodeAllocsSync, *QueryMeta, error) {
	if n.noSync.Load() {
		return nil, nil, ErrSyncUnsupported
	}
	req := &allocsSyncRequest{Since: since, Known: known}
	for _, j := range held {
		req.HeldJobs = append(req.HeldJobs, j.Ref())
	}
	body, err := wire.Encode(req)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding request: %w", err)
	}
	h := http.Header{"Content-Type": {wire.ContentType}, "Accept": acceptWire["Accept"]}
	var out struct {
		Allocs       map[string]uint64
		KnownCurrent bool
		Changed      []*structs.Allocation
		FromHeld     map[string]int
	}
	var meta *QueryMeta
	path := "/v1/internal/node/" + url.PathEscape(nodeID) + "/allocs-sync"
	err = n.try(ctx, q, func(ctx context.Context, c *Client) error {
		out.Allocs, out.KnownCurrent, out.Changed, out.FromHeld = nil, false, nil, nil
		var err error
		meta, err = c.doBody(ctx, http.MethodPut, path, q.values(), body, h, &out)
		return staleWithoutLeader(q, meta, err)
	})
	var se *StatusError
	if errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusMethodNotAllowed) {
		n.noSync.Store(true)
		return nil, nil, fmt.Errorf("%w: %w", ErrSyncUnsupported, err)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := pointAtHeld(out.Changed, out.FromHeld, held); err != nil {
		return nil, nil, err
	}
	if out.Allocs == nil && !out.KnownCurrent {
		out.Allocs = map[string]uint64{}
	}
	return &NodeAllocsSync{Allocs: out.Allocs, Changed: out.Changed, KnownCurrent: out.KnownCurrent}, meta, nil
}

// pointAtHeld gives each alloc the servers sent without its job (fromHeld:
// alloc ID → position in held) the caller's copy, and makes the numbers
// of the jobs that came in a MessagePack answer read as a JSON answer's.
func pointAtHeld(allocs []*structs.Allocation, fromHeld map[string]int, held []*structs.Job) error {
	for _, a := range allocs {
		if a == nil {
			continue
		}
		// A MessagePack answer gives a driver config's numbers as the
		// integers and floats they were stored as; drivers read them as
		// a JSON answer gives them.
		if a.Job != nil {
			a.Job.JSONNumbers()
		}
		i, ok := fromHeld[a.ID]
		if !ok {
			continue
		}
		if i < 0 || i >= len(held) || held[i] == nil {
			return fmt.Errorf("%w: alloc %s: the servers named held job %d of %d", ErrUnexpectedResponse, a.ID, i, len(held))
		}
		a.Job = held[i]
	}
	return nil
}
