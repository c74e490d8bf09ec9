package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/structs"
)

var errUnavailable = errors.New("fake server unavailable")

// fakeServer is an in-memory ServerAPI with the servers' behaviour the
// agent relies on: registration, heartbeats (404 for a forgotten node), a
// blocking allocations query and client updates. It also serves the same
// over HTTP, for the tests of the real transport.
type fakeServer struct {
	mu        sync.Mutex
	nodes     map[string]*structs.Node
	registers int
	beats     int
	// rebalances counts the agent's Rebalance calls.
	rebalances int
	ttl        time.Duration
	down       bool
	allocs     map[string]*structs.Allocation
	index      uint64
	changed    chan struct{}
	// updates records each UpdateAllocs call with the time it arrived.
	updates []fakeUpdate
	// gets records the IDs asked for by each GetAllocs call, and held
	// the jobs the client said it held in each.
	gets [][]string
	held [][]structs.JobRef
}

type fakeUpdate struct {
	at     time.Time
	allocs []*structs.Allocation
}

func newFakeServer() *fakeServer {
	return &fakeServer{nodes: map[string]*structs.Node{}, allocs: map[string]*structs.Allocation{},
		ttl: 10 * time.Second, index: 1, changed: make(chan struct{})}
}

// bumpLocked advances the index and wakes the blocking queries.
func (f *fakeServer) bumpLocked() uint64 {
	f.index++
	close(f.changed)
	f.changed = make(chan struct{})
	return f.index
}

func (f *fakeServer) Register(_ context.Context, n *structs.Node) (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return 0, errUnavailable
	}
	f.nodes[n.ID] = n.Copy()
	f.registers++
	return f.ttl, nil
}

func (f *fakeServer) Heartbeat(_ context.Context, id string) (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return 0, errUnavailable
	}
	if f.nodes[id] == nil {
		return 0, ErrNodeUnknown
	}
	f.beats++
	return f.ttl, nil
}

// AllocsIndex answers at the fake's global index, so that (unlike the
// servers) every write wakes it, the client's own reports included.
func (f *fakeServer) AllocsIndex(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) (map[string]uint64, uint64, error) {
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		if f.down {
			f.mu.Unlock()
			return nil, 0, errUnavailable
		}
		if minIndex == 0 || f.index > minIndex {
			out := map[string]uint64{}
			for _, a := range f.allocs {
				if a.NodeID == nodeID {
					out[a.ID] = allocIndex(a)
				}
			}
			idx := f.index
			f.mu.Unlock()
			return out, idx, nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-timeout.C:
			minIndex = 0
		case <-ch:
		}
	}
}

// GetAllocs answers at once: the fake is never stale.
// An alloc of a held job is given the client's copy of the job, as the
// HTTP client does with the servers' answer.
func (f *fakeServer) GetAllocs(_ context.Context, ids []string, held []*structs.Job, _ uint64, _ time.Duration) ([]*structs.Allocation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, errUnavailable
	}
	f.gets = append(f.gets, slices.Clone(ids))
	refs := []structs.JobRef{}
	for _, j := range held {
		refs = append(refs, j.Ref())
	}
	f.held = append(f.held, refs)
	var out []*structs.Allocation
	for _, id := range ids {
		if a := f.allocs[id]; a != nil {
			c := a.Copy()
			if i := slices.Index(refs, a.Job.Ref()); i >= 0 && a.Job != nil {
				c.Job = held[i]
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// fetched returns the IDs asked for by each GetAllocs call so far.
func (f *fakeServer) fetched() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.gets)
}

// reports returns the number of UpdateAllocs calls so far.
func (f *fakeServer) reports() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.updates)
}

// heldJobs returns the jobs the client held in each GetAllocs call so far.
func (f *fakeServer) heldJobs() [][]structs.JobRef {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.held)
}

func (f *fakeServer) UpdateAllocs(_ context.Context, allocs []*structs.Allocation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return errUnavailable
	}
	f.updates = append(f.updates, fakeUpdate{at: time.Now(), allocs: allocs})
	idx := f.bumpLocked()
	for _, u := range allocs {
		a := f.allocs[u.ID]
		if a == nil {
			continue
		}
		a = a.Copy()
		a.ClientStatus, a.ClientDescription = u.ClientStatus, u.ClientDescription
		if u.TaskStates != nil {
			a.TaskStates = u.TaskStates
		}
		if u.DeploymentStatus != nil && u.DeploymentStatus.Healthy != nil {
			if a.DeploymentStatus == nil {
				a.DeploymentStatus = &structs.AllocDeploymentStatus{}
			}
			h := *u.DeploymentStatus.Healthy
			a.DeploymentStatus.Healthy, a.DeploymentStatus.Timestamp = &h, u.DeploymentStatus.Timestamp
		}
		a.ModifyIndex = idx
		f.allocs[a.ID] = a
	}
	return nil
}

// put places or changes an allocation as the scheduler would.
func (f *fakeServer) put(a *structs.Allocation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a = a.Copy()
	idx := f.bumpLocked()
	a.ModifyIndex, a.AllocModifyIndex = idx, idx
	if a.ClientStatus == "" {
		a.ClientStatus = structs.AllocClientStatusPending
	}
	f.allocs[a.ID] = a
}

// change applies fn to a copy of the stored allocation, as a scheduler
// write.
func (f *fakeServer) change(id string, fn func(*structs.Allocation)) {
	f.mu.Lock()
	a := f.allocs[id].Copy()
	f.mu.Unlock()
	fn(a)
	f.put(a)
}

func (f *fakeServer) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.allocs, id)
	f.bumpLocked()
}

func (f *fakeServer) alloc(id string) *structs.Allocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.allocs[id].Copy()
}

func (f *fakeServer) forget(nodeID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.nodes, nodeID)
}

func (f *fakeServer) counts() (registers, beats int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registers, f.beats
}

// Rebalance implements the agent's optional rebalancer.
func (f *fakeServer) Rebalance() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rebalances++
}

func (f *fakeServer) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// ServeHTTP speaks the client endpoints over the fake.
func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reply := func(v any, err error) {
		if errors.Is(err, ErrNodeUnknown) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(v)
	}
	p := r.URL.Path
	switch {
	case p == "/v1/internal/node/register":
		var req structs.NodeRegisterRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Node == nil {
			http.Error(w, "bad body", 400)
			return
		}
		ttl, err := f.Register(r.Context(), req.Node)
		reply(map[string]any{"HeartbeatTTL": ttl, "Index": 1}, err)
	case strings.HasPrefix(p, "/v1/internal/node/") && strings.HasSuffix(p, "/heartbeat"):
		id := strings.TrimSuffix(strings.TrimPrefix(p, "/v1/internal/node/"), "/heartbeat")
		ttl, err := f.Heartbeat(r.Context(), id)
		reply(map[string]any{"HeartbeatTTL": ttl}, err)
	case strings.HasPrefix(p, "/v1/internal/node/") && strings.HasSuffix(p, "/allocs-index"):
		id := strings.TrimSuffix(strings.TrimPrefix(p, "/v1/internal/node/"), "/allocs-index")
		idx, _ := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
		wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
		allocs, n, err := f.AllocsIndex(r.Context(), id, idx, wait)
		w.Header().Set("X-Nomad-Index", strconv.FormatUint(n, 10))
		reply(map[string]any{"Allocs": allocs, "Index": n}, err)
	case p == "/v1/internal/allocs/get":
		var req struct{ AllocIDs []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad body", 400)
			return
		}
		allocs, err := f.GetAllocs(r.Context(), req.AllocIDs, nil, 0, 0)
		reply(map[string]any{"Allocs": allocs}, err)
	case p == "/v1/internal/allocs/update":
		// Clients report in MessagePack (package wire).
		var req struct{ Allocs []*structs.Allocation }
		body, err := io.ReadAll(r.Body)
		if err == nil {
			if r.Header.Get("Content-Type") == wire.ContentType {
				err = wire.Decode(body, &req)
			} else {
				err = json.Unmarshal(body, &req)
			}
		}
		if err != nil {
			http.Error(w, "malformed request body: "+err.Error(), 400)
			return
		}
		reply(map[string]any{"Index": 1}, f.UpdateAllocs(r.Context(), req.Allocs))
	default:
		http.NotFound(w, r)
	}
}

// testLogger sends the agent's logs to t.Log.
func testLogger(t *testing.T) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: tWriter{t}})
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
