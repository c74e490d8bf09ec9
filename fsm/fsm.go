// Package fsm is drover's replicated state machine: the raft.FSM that
// applies log entries to the state store, and snapshots and restores it.
//
// An entry is one MessageType byte followed by the request, encoded with
// MessagePack. Apply decodes the request and performs one state store
// transaction. It is deterministic: it never reads a clock, never mints an
// ID and never calls into leader-side services (eval broker, deployment
// watcher); the leader stamps IDs and times into the request before
// raft.Apply, and leader loops learn of changes through the store's watch
// channels.
//
// Payload encoding was chosen by measurement (BenchmarkEncoding; encode +
// decode per entry on a 2-CPU AMD EPYC, Go 1.26):
//
//	entry                                  msgpack            encoding/json
//	plan results, 500 allocs + job each    41 ms, 1.29 MB     59 ms, 1.69 MB
//	plan results, 500 allocs, job once     11 ms, 0.48 MB     18 ms, 0.62 MB
//	job register (job + eval)              76 µs, 1977 B     102 µs, 2639 B
//
// MessagePack was 1.2–1.7x faster (it varies between runs on a shared
// machine) and about 24% smaller on every entry.
package fsm

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// FSM applies committed log entries to a state store.
//
// Contract with hashicorp/raft: Apply, Snapshot and Restore are called from
// raft's single FSM goroutine, never concurrently with each other; Persist
// runs on another goroutine, concurrently with Apply, on the immutable
// snapshot taken by Snapshot. State may be called from any goroutine.
type FSM struct {
	logger hclog.Logger
	store  atomic.Pointer[state.Store]
	// events, when set, receives the events of every entry (events.go).
	events atomic.Pointer[stream.Buffer]
	// trackedVersions is server.job_tracked_versions (0: the default),
	// given to every store, the restored ones too.
	trackedVersions atomic.Int64
	// snapshotMinBuild gives the servers' lowest build to snapshots
	// (SetSnapshotMinBuild, snapshot.go).
	snapshotMinBuild atomic.Pointer[func() int]
}

// SetJobTrackedVersions sets how many versions of a job the state keeps
// (server.job_tracked_versions; n < 1: the default, 6), before the FSM
// applies anything.
func (f *FSM) SetJobTrackedVersions(n int) {
	f.trackedVersions.Store(int64(n))
	f.State().SetJobTrackedVersions(n)
}

var _ raft.FSM = (*FSM)(nil)

// New returns an FSM over an empty store.
func New(logger hclog.Logger) *FSM {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	f := &FSM{logger: logger.Named("fsm")}
	s, err := state.New()
	if err != nil {
		// The schema is static and validated by the state package's tests;
		// this cannot fail at run time.
		panic(err)
	}
	f.store.Store(s)
	return f
}

// State returns the current store. After a Restore it is a new store; the
// old one is abandoned (its blocking queries return) but stays readable.
func (f *FSM) State() *state.Store { return f.store.Load() }

// Apply applies one entry and returns, as the raft.ApplyFuture response:
//
//	NodeRegister, NodeUpdateStatus, EvalUpdate, ApplyPlanResults,
//	AllocClientUpdate, DeploymentStatusUpdate, DeploymentPromote,
//	DeploymentAllocHealth, JobStability,
//	AllocUpdateDesiredTransition,
//	NodeDeregister, EvalReap,
//	ACLTokenBootstrap, ACLPolicyUpsert,
//	ACLPolicyDelete, ACLTokenUpsert,
//	ACLTokenDelete, ScalingEvent,
//	NodeUpdateDrain, NodeUpdateEligibility,
//	RootKeyDelete                            nil on success
//	ServiceRegistrationDelete                nil on success
//	ACLRoleUpsert, ACLRoleDelete,
//	ACLAuthMethodUpsert, ACLAuthMethodDelete,
//	ACLBindingRuleUpsert, ACLBindingRuleDelete,
//	OneTimeTokenUpsert, OneTimeTokenExchange nil on success
//	NamespaceUpsert, NamespaceDelete         nil on success
//	NodePoolUpsert, NodePoolDelete           nil on success
//	JobRegister                              *structs.JobRegisterResult
//	JobDeregister                            *structs.JobRegisterResult
//	                                         (nil when purged)
//	VarApply, VarLock                        *structs.VarApplyResult (a
//	                                         check-and-set or lock conflict too)
//	RootKeyUpsert                            bool: whether the key was added
//
// or an error: a state rejection (errors.Is state.ErrNotFound,
// state.ErrDeploymentTerminal, state.ErrPromotion, state.ErrConflict,
// state.ErrInvalid, state.ErrACLBootstrapped) after
// which nothing of the entry was applied, ErrDecode, ErrEmptyEntry, or
// ErrUnknownType, ErrBadRequest. An unknown type with IgnoreUnknownTypeFlag is skipped
// (nil). Non-command log types (e.g. configuration) are ignored.
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	resp := f.apply(l.Index, l.Data)
	if err, ok := resp.(error); ok && !isRejection(err) {
		f.logger.Error("cannot apply log entry", "index", l.Index, "error", err)
	}
	return resp
}

// isRejection reports whether err is the store refusing a request (an
// expected answer to the caller) rather than a broken entry.
func isRejection(err error) bool {
	return errors.Is(err, state.ErrNotFound) || errors.Is(err, state.ErrDeploymentTerminal) ||
		errors.Is(err, state.ErrPromotion) || errors.Is(err, state.ErrInvalid) ||
		errors.Is(err, state.ErrConflict) || errors.Is(err, state.ErrACLBootstrapped)
}

func (f *FSM) apply(index uint64, data []byte) any {
	if len(data) == 0 {
		return ErrEmptyEntry
	}
	t := MessageType(data[0])
	req := newRequest(t &^ IgnoreUnknownTypeFlag)
	if req == nil {
		if t&IgnoreUnknownTypeFlag != 0 {
			f.logger.Warn("ignoring unknown message type", "type", uint8(t), "index", index)
			return nil
		}
		return fmt.Errorf("%w: %d at index %d", ErrUnknownType, uint8(t), index)
	}
	if err := decode(data[1:], req); err != nil {
		return fmt.Errorf("%s at index %d: %w", t, index, err)
	}
	resp, err := f.dispatch(index, t&^IgnoreUnknownTypeFlag, req)
	if err != nil {
		return err
	}
	return resp
}

// dispatch performs the request's one store transaction. A request that
// is well-formed msgpack but inconsistent enough to trip the store (say, a
// nil element deep in a job) is answered with ErrBadRequest, the
// transaction aborted: no entry can take a server down.
func (f *FSM) dispatch(index uint64, t MessageType, req any) (resp any, err error) {
	s := f.State()
	txn := s.WriteTxn(index)
	defer txn.Abort()
	events := f.events.Load()
	if events != nil && publishes(t) {
		txn.TrackChanges()
	} else {
		events = nil
	}
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, fmt.Errorf("%w: %T at index %d: %v", ErrBadRequest, req, index, r)
		}
	}()
	switch r := req.(type) {
	case *structs.NodeRegisterRequest:
		err = s.UpsertNodeTxn(txn, r.Node)
	case *structs.NodeUpdateStatusRequest:
		err = s.UpdateNodeStatusTxn(txn, r)
	case *structs.JobRegisterRequest:
		var res *structs.JobRegisterResult
		if res, err = s.RegisterJobTxn(txn, r); res != nil {
			resp = res
		}
	case *structs.JobRegisterAtVersionRequest:
		var res *structs.JobRegisterResult
		if res, err = s.RegisterJobAtVersionTxn(txn, r); res != nil {
			resp = res
		}
	case *structs.JobDeregisterRequest:
		var res *structs.JobRegisterResult
		if res, err = s.DeregisterJobTxn(txn, r); res != nil {
			resp = res
		}
	case *structs.EvalUpdateRequest:
		err = s.UpsertEvalsTxn(txn, r.Evals)
	case *structs.ApplyPlanResultsRequest:
		err = s.ApplyPlanResultsTxn(txn, r)
	case *structs.AllocClientUpdateRequest:
		err = s.UpdateAllocsFromClientTxn(txn, r)
	case *structs.DeploymentStatusUpdateRequest:
		err = s.UpdateDeploymentStatusReqTxn(txn, r)
	case *structs.DeploymentPromoteRequest:
		err = s.PromoteDeploymentTxn(txn, r)
	case *structs.DeploymentAllocHealthRequest:
		err = s.SetAllocHealthTxn(txn, r)
	case *structs.JobStabilityRequest:
		err = s.SetJobStabilityTxn(txn, r)
	case *structs.AllocUpdateDesiredTransitionRequest:
		err = s.UpdateAllocDesiredTransitionTxn(txn, r)
	case *structs.NodeDeregisterRequest:
		err = s.DeleteNodesTxn(txn, r.NodeIDs)
	case *structs.EvalReapRequest:
		err = s.ReapTxn(txn, r)
	case *structs.SchedulerSetConfigRequest:
		var ok bool
		ok, err = s.SetSchedulerConfigTxn(txn, r)
		resp = ok
	case *structs.AutopilotSetConfigRequest:
		var ok bool
		ok, err = s.SetAutopilotConfigTxn(txn, r)
		resp = ok
	case *structs.ACLTokenBootstrapRequest:
		err = s.BootstrapACLTxn(txn, r)
	case *structs.ACLPolicyUpsertRequest:
		err = s.UpsertACLPoliciesTxn(txn, r.Policies)
	case *structs.ACLPolicyDeleteRequest:
		err = s.DeleteACLPoliciesTxn(txn, r.Names)
	case *structs.ACLTokenUpsertRequest:
		err = s.UpsertACLTokensTxn(txn, r.Tokens)
	case *structs.ACLTokenDeleteRequest:
		err = s.DeleteACLTokensTxn(txn, r.AccessorIDs)
	case *structs.ScalingEventRequest:
		err = s.AddScalingEventTxn(txn, r)
	case *structs.NodeUpdateDrainRequest:
		err = s.UpdateNodeDrainTxn(txn, r)
	case *structs.NodeUpdateEligibilityRequest:
		err = s.UpdateNodeEligibilityTxn(txn, r)
	case *structs.VarApplyRequest:
		var res *structs.VarApplyResult
		if res, err = s.ApplyVarTxn(txn, r); res != nil {
			resp = res
		}
	case *structs.VarLockRequest:
		var res *structs.VarApplyResult
		if res, err = s.VarLockTxn(txn, r); res != nil {
			resp = res
		}
	case *structs.RootKeyUpsertRequest:
		var added bool
		added, err = s.UpsertRootKeyTxn(txn, r)
		resp = added
	case *structs.RootKeyDeleteRequest:
		err = s.DeleteRootKeyTxn(txn, r)
	case *structs.ServiceRegistrationDeleteRequest:
		err = s.DeleteServiceRegistrationTxn(txn, r)
	case *structs.JobRestartRequest:
		err = s.RestartJobTxn(txn, r)
	case *structs.DeploymentAnalysisRequest:
		err = s.UpdateDeploymentAnalysisTxn(txn, r)
	case *structs.ACLRoleUpsertRequest:
		err = s.UpsertACLRolesTxn(txn, r.Roles)
	case *structs.ACLRoleDeleteRequest:
		err = s.DeleteACLRolesTxn(txn, r.IDs)
	case *structs.ACLAuthMethodUpsertRequest:
		err = s.UpsertACLAuthMethodsTxn(txn, r.Methods)
	case *structs.ACLAuthMethodDeleteRequest:
		err = s.DeleteACLAuthMethodsTxn(txn, r.Names)
	case *structs.ACLBindingRuleUpsertRequest:
		err = s.UpsertACLBindingRulesTxn(txn, r.Rules)
	case *structs.ACLBindingRuleDeleteRequest:
		err = s.DeleteACLBindingRulesTxn(txn, r.IDs)
	case *structs.OneTimeTokenUpsertRequest:
		err = s.UpsertOneTimeTokenTxn(txn, r)
	case *structs.OneTimeTokenExchangeRequest:
		err = s.DeleteOneTimeTokenTxn(txn, r.SecretHash)
	case *structs.NamespaceUpsertRequest:
		err = s.UpsertNamespacesTxn(txn, r)
	case *structs.NamespaceDeleteRequest:
		err = s.DeleteNamespacesTxn(txn, r)
	case *structs.NodePoolUpsertRequest:
		err = s.UpsertNodePoolsTxn(txn, r)
	case *structs.NodePoolDeleteRequest:
		err = s.DeleteNodePoolsTxn(txn, r)
	default:
		err = fmt.Errorf("%w: request %T", ErrUnknownType, req)
	}
	if err != nil {
		return nil, err
	}
	if err := txn.Commit(); err != nil {
		return nil, err
	}
	if events != nil {
		publishEvents(events, index, t, eventsOf(t, txn.Changes()))
	}
	return resp, nil
}
