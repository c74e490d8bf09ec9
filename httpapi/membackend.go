package httpapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// MemBackend is a Backend for tests of the API and of its users: a single
// server that is always the leader and applies every write straight to a
// real FSM, with consecutive log indexes and no Raft. It also implements
// JobDeregisterBackend, stamping the evaluation itself. Nothing schedules:
// a test plays the servers' part by calling Apply.
type MemBackend struct {
	mu    sync.Mutex
	fsm   *fsm.FSM
	index uint64
	// Now stamps evaluations; time.Now when nil.
	Now func() time.Time
}

// NewMemBackend returns a MemBackend over a fresh FSM.
func NewMemBackend() *MemBackend { return &MemBackend{fsm: fsm.New(nil)} }

// State returns the FSM's store.
func (b *MemBackend) State() *state.Store { return b.fsm.State() }

// Apply encodes req and applies it to the FSM at the next index.
func (b *MemBackend) Apply(_ context.Context, t fsm.MessageType, req any) (any, uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, err := fsm.Encode(t, req)
	if err != nil {
		return nil, 0, err
	}
	b.index++
	resp := b.fsm.Apply(&raft.Log{Index: b.index, Type: raft.LogCommand, Data: data})
	if err, ok := resp.(error); ok {
		return nil, b.index, err
	}
	return resp, b.index, nil
}

// IsLeader is always true.
func (b *MemBackend) IsLeader() bool { return true }

// Leader names this server.
func (b *MemBackend) Leader() (string, string) { return "127.0.0.1:4647", "mem" }

// LeaderHTTPAddr fails: a MemBackend is its own leader and never forwards.
func (b *MemBackend) LeaderHTTPAddr() (string, error) { return "", cluster.ErrNoLeader }

// LastContact is 0.
func (b *MemBackend) LastContact() time.Duration { return 0 }

// RaftConfiguration is this one server.
func (b *MemBackend) RaftConfiguration() (*structs.RaftConfiguration, error) {
	return &structs.RaftConfiguration{Index: 1, Servers: []*structs.RaftServer{
		{ID: "mem", Node: "mem", Address: "127.0.0.1:4647", Leader: true, Voter: true, RaftProtocol: "3"},
	}}, nil
}

// Self describes a server agent.
func (b *MemBackend) Self() *structs.AgentSelf {
	return &structs.AgentSelf{Config: structs.AgentConfig{Region: structs.DefaultRegion, NodeName: "mem"}}
}

// Join answers with this server alone.
func (b *MemBackend) Join(context.Context, *structs.ServerJoinRequest) (*structs.ServerJoinResponse, error) {
	return &structs.ServerJoinResponse{Self: structs.ServerMember{ID: "mem"}, Bootstrapped: true}, nil
}

func (b *MemBackend) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// DeregisterJob stops or purges the job with a job-deregister evaluation.
func (b *MemBackend) DeregisterJob(ctx context.Context, namespace, jobID string, purge bool) (*JobDeregisterResponse, error) {
	typ, prio := structs.JobTypeService, structs.DefaultJobPriority
	if j, err := b.State().Snapshot().JobByID(namespace, jobID); err != nil {
		return nil, err
	} else if j != nil {
		typ, prio = j.Type, j.Priority
	}
	now := b.now().UnixNano()
	eval := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: namespace, Priority: prio, Type: typ,
		TriggeredBy: structs.EvalTriggerJobDeregister, JobID: jobID, Status: structs.EvalStatusPending,
		CreateTime: now, ModifyTime: now,
	}
	resp, index, err := b.Apply(ctx, fsm.JobDeregisterRequestType,
		&structs.JobDeregisterRequest{Namespace: namespace, JobID: jobID, Purge: purge, Eval: eval, SubmitTime: now})
	if err != nil {
		return nil, fmt.Errorf("deregistering job %q: %w", jobID, err)
	}
	out := &JobDeregisterResponse{EvalID: eval.ID, EvalCreateIndex: index, Index: index}
	if r, ok := resp.(*structs.JobRegisterResult); ok && r != nil {
		out.JobModifyIndex = r.JobModifyIndex
	}
	return out, nil
}
