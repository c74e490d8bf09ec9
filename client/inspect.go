package client

import (
	"context"
	"fmt"
	"maps"

	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/structs"
)

// AllocInfo is what the client knows of one of its allocations, for the
// agent's client endpoints (logs).
type AllocInfo struct {
	// Alloc is the servers' latest version of the allocation.
	Alloc *structs.Allocation
	// TaskStates are the tasks' latest states, by task name.
	TaskStates map[string]*structs.TaskState
	// Dir is the allocation's directory tree.
	Dir allocrunner.AllocDir
}

// Alloc returns what the client knows of the allocation id, and false for
// an allocation it does not hold.
func (a *Agent) Alloc(id string) (AllocInfo, bool) {
	a.mu.Lock()
	e := a.allocs[id]
	a.mu.Unlock()
	if e == nil {
		return AllocInfo{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return AllocInfo{Alloc: e.alloc, TaskStates: maps.Clone(e.last.TaskStates), Dir: e.dir}, true
}

// aclResolver is a ServerAPI that asks the servers what a token grants.
type aclResolver interface {
	ResolveACL(ctx context.Context, token string) (*structs.ACLResolveResponse, error)
}

// ResolveACL asks the servers, as this node, what a token grants ("" is
// the anonymous token): the agent checks the requests to the client's
// own endpoints with it. An error when the servers cannot be asked.
func (a *Agent) ResolveACL(ctx context.Context, token string) (*structs.ACLResolveResponse, error) {
	r, ok := a.api.(aclResolver)
	if !ok {
		return nil, fmt.Errorf("%w: the servers' API cannot resolve tokens", ErrInvalidConfig)
	}
	return r.ResolveACL(ctx, token)
}
