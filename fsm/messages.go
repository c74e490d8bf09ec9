package fsm

import (
	"errors"
	"fmt"

	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/structs"
)

// MessageType is the first byte of every log entry; the payload follows.
// The high bit (IgnoreUnknownTypeFlag) asks servers that do not know the
// type to skip the entry instead of failing it, so that servers can be
// upgraded one at a time while new types are introduced: a new type that is
// safe to miss is sent with the bit set.
type MessageType uint8

// IgnoreUnknownTypeFlag marks an entry that servers may skip when they do
// not know its type.
const IgnoreUnknownTypeFlag MessageType = 0x80

// Message types. The values are part of the log format: append only, never
// renumber. Each payload is the structs request of the same name.
const (
	NodeRegisterRequestType                 MessageType = iota // structs.NodeRegisterRequest
	NodeUpdateStatusRequestType                                // structs.NodeUpdateStatusRequest
	JobRegisterRequestType                                     // structs.JobRegisterRequest
	JobDeregisterRequestType                                   // structs.JobDeregisterRequest
	EvalUpdateRequestType                                      // structs.EvalUpdateRequest
	ApplyPlanResultsRequestType                                // structs.ApplyPlanResultsRequest
	AllocClientUpdateRequestType                               // structs.AllocClientUpdateRequest
	DeploymentStatusUpdateRequestType                          // structs.DeploymentStatusUpdateRequest
	DeploymentPromoteRequestType                               // structs.DeploymentPromoteRequest
	DeploymentAllocHealthRequestType                           // structs.DeploymentAllocHealthRequest
	JobStabilityRequestType                                    // structs.JobStabilityRequest
	AllocUpdateDesiredTransitionRequestType                    // structs.AllocUpdateDesiredTransitionRequest
	NodeDeregisterRequestType                                  // structs.NodeDeregisterRequest
	EvalReapRequestType                                        // structs.EvalReapRequest
	AutopilotSetConfigRequestType                              // structs.AutopilotSetConfigRequest
	// The ACL entries never carry the ignore bit: a server that skipped a
	// token's deletion would keep honouring the token.
	ACLTokenBootstrapRequestType     // structs.ACLTokenBootstrapRequest
	ACLPolicyUpsertRequestType       // structs.ACLPolicyUpsertRequest
	ACLPolicyDeleteRequestType       // structs.ACLPolicyDeleteRequest
	ACLTokenUpsertRequestType        // structs.ACLTokenUpsertRequest
	ACLTokenDeleteRequestType        // structs.ACLTokenDeleteRequest
	ScalingEventRequestType          // structs.ScalingEventRequest
	NodeUpdateDrainRequestType       // structs.NodeUpdateDrainRequest
	NodeUpdateEligibilityRequestType // structs.NodeUpdateEligibilityRequest
	// Variables and the keyring never carry the ignore bit either: a
	// server that skipped a key could not open what it sealed.
	VarApplyRequestType      // structs.VarApplyRequest
	RootKeyUpsertRequestType // structs.RootKeyUpsertRequest
	RootKeyDeleteRequestType // structs.RootKeyDeleteRequest
	// Registrations are derived by every server from the allocations;
	// a server that skipped a hand deletion would keep a registration
	// the others removed, so this one never carries the ignore bit.
	ServiceRegistrationDeleteRequestType // structs.ServiceRegistrationDeleteRequest
)

// Message types from 30 on are numbered explicitly: branches add types in
// parallel, each from its own range.
const (
	// JobRestartRequestType (structs.JobRestartRequest) starts a job
	// restart. It never carries the ignore bit: a server that skipped it
	// would not know the restart's deployment.
	JobRestartRequestType MessageType = 30

	// AnalysisMeasurementRequestType (structs.DeploymentAnalysisRequest)
	// records a measurement of an analysis run; AnalysisRunRequestType
	// (the same payload) starts runs or sets their phases. Neither carries
	// the ignore bit: a server that skipped one would hold other runs.
	AnalysisMeasurementRequestType MessageType = 35
	AnalysisRunRequestType         MessageType = 36

	// SchedulerSetConfigRequestType (structs.SchedulerSetConfigRequest)
	// replaces the scheduler configuration. It never carries the ignore
	// bit: a server that skipped it would schedule by another algorithm
	// once it leads. Range 60–62 is the scheduler configuration's.
	SchedulerSetConfigRequestType MessageType = 60

	// The ACL roles, auth methods, binding rules and one-time tokens
	// (range 50–59): each of structs' request of the same name
	// (OneTimeTokenExchange: structs.OneTimeTokenExchangeRequest, which
	// uses the one-time token up). None carries the ignore bit: a server
	// that skipped one would grant what the others do not.
	ACLRoleUpsertRequestType        MessageType = 50
	ACLRoleDeleteRequestType        MessageType = 51
	ACLAuthMethodUpsertRequestType  MessageType = 52
	ACLAuthMethodDeleteRequestType  MessageType = 53
	ACLBindingRuleUpsertRequestType MessageType = 54
	ACLBindingRuleDeleteRequestType MessageType = 55
	OneTimeTokenUpsertRequestType   MessageType = 56
	OneTimeTokenExchangeRequestType MessageType = 57

	// NamespaceUpsertRequestType (structs.NamespaceUpsertRequest) creates
	// or replaces namespaces; NamespaceDeleteRequestType
	// (structs.NamespaceDeleteRequest) deletes them. Neither carries the
	// ignore bit: a server that skipped one would accept jobs the others
	// refuse. Range 40–44 is namespaces'.
	NamespaceUpsertRequestType MessageType = 40
	NamespaceDeleteRequestType MessageType = 41

	// NodePoolUpsertRequestType (structs.NodePoolUpsertRequest) creates
	// or replaces node pools; NodePoolDeleteRequestType
	// (structs.NodePoolDeleteRequest) deletes them. Neither carries the
	// ignore bit: a server that skipped one would place jobs by other
	// pools. Range 45–49 is node pools'.
	NodePoolUpsertRequestType MessageType = 45
	NodePoolDeleteRequestType MessageType = 46

	// VarLockRequestType (structs.VarLockRequest) acquires, renews or
	// releases a variable's lock, or is the leader's release of a lock
	// whose lease and delay passed. It never carries the ignore bit: a
	// server that skipped one would hold another lock. Range 63–69 is
	// variable locks' and the remaining API endpoints'.
	VarLockRequestType MessageType = 63

	// JobRegisterAtVersionRequestType (structs.JobRegisterAtVersionRequest)
	// registers a region's copy of a multi-region job at the version all
	// its regions take. It never carries the ignore bit: a server that
	// skipped it would miss the job. Range 70–74 is multi-region jobs'.
	JobRegisterAtVersionRequestType MessageType = 70
)

var typeNames = map[MessageType]string{
	NodeRegisterRequestType:                 "NodeRegister",
	NodeUpdateStatusRequestType:             "NodeUpdateStatus",
	JobRegisterRequestType:                  "JobRegister",
	JobDeregisterRequestType:                "JobDeregister",
	EvalUpdateRequestType:                   "EvalUpdate",
	ApplyPlanResultsRequestType:             "ApplyPlanResults",
	AllocClientUpdateRequestType:            "AllocClientUpdate",
	DeploymentStatusUpdateRequestType:       "DeploymentStatusUpdate",
	DeploymentPromoteRequestType:            "DeploymentPromote",
	DeploymentAllocHealthRequestType:        "DeploymentAllocHealth",
	JobStabilityRequestType:                 "JobStability",
	AllocUpdateDesiredTransitionRequestType: "AllocUpdateDesiredTransition",
	NodeDeregisterRequestType:               "NodeDeregister",
	EvalReapRequestType:                     "EvalReap",
	AutopilotSetConfigRequestType:           "AutopilotSetConfig",
	ACLTokenBootstrapRequestType:            "ACLTokenBootstrap",
	ACLPolicyUpsertRequestType:              "ACLPolicyUpsert",
	ACLPolicyDeleteRequestType:              "ACLPolicyDelete",
	ACLTokenUpsertRequestType:               "ACLTokenUpsert",
	ACLTokenDeleteRequestType:               "ACLTokenDelete",
	ScalingEventRequestType:                 "ScalingEvent",
	NodeUpdateDrainRequestType:              "NodeUpdateDrain",
	NodeUpdateEligibilityRequestType:        "NodeUpdateEligibility",
	VarApplyRequestType:                     "VarApply",
	RootKeyUpsertRequestType:                "RootKeyUpsert",
	RootKeyDeleteRequestType:                "RootKeyDelete",
	ServiceRegistrationDeleteRequestType:    "ServiceRegistrationDelete",
	JobRestartRequestType:                   "JobRestart",
	AnalysisMeasurementRequestType:          "AnalysisMeasurement",
	AnalysisRunRequestType:                  "AnalysisRun",
	SchedulerSetConfigRequestType:           "SchedulerSetConfig",
	ACLRoleUpsertRequestType:                "ACLRoleUpsert",
	ACLRoleDeleteRequestType:                "ACLRoleDelete",
	ACLAuthMethodUpsertRequestType:          "ACLAuthMethodUpsert",
	ACLAuthMethodDeleteRequestType:          "ACLAuthMethodDelete",
	ACLBindingRuleUpsertRequestType:         "ACLBindingRuleUpsert",
	ACLBindingRuleDeleteRequestType:         "ACLBindingRuleDelete",
	OneTimeTokenUpsertRequestType:           "OneTimeTokenUpsert",
	OneTimeTokenExchangeRequestType:         "OneTimeTokenExchange",
	NamespaceUpsertRequestType:              "NamespaceUpsert",
	NamespaceDeleteRequestType:              "NamespaceDelete",
	NodePoolUpsertRequestType:               "NodePoolUpsert",
	NodePoolDeleteRequestType:               "NodePoolDelete",
	VarLockRequestType:                      "VarLock",
	JobRegisterAtVersionRequestType:         "JobRegisterAtVersion",
}

// String names the type, for logs.
func (t MessageType) String() string {
	if n, ok := typeNames[t&^IgnoreUnknownTypeFlag]; ok {
		return n
	}
	return fmt.Sprintf("MessageType(%d)", uint8(t))
}

// Sentinel errors of encoding and applying entries.
var (
	// ErrEmptyEntry: a log entry without even a type byte.
	ErrEmptyEntry = errors.New("fsm: empty log entry")
	// ErrUnknownType: a type this server does not know, without the ignore
	// bit. The entry is not applied.
	ErrUnknownType = errors.New("fsm: unknown message type")
	// ErrDecode: the payload does not decode into the type's request.
	ErrDecode = errors.New("fsm: cannot decode payload")
	// ErrBadRequest: a decoded request the store could not process.
	ErrBadRequest = errors.New("fsm: bad request")
	// ErrEncode: Encode could not encode the request.
	ErrEncode = errors.New("fsm: cannot encode request")
	// ErrSnapshot: a snapshot stream is corrupt or of an unknown format.
	ErrSnapshot = errors.New("fsm: bad snapshot")
)

// Payload encoding: MessagePack (hashicorp/go-msgpack/v2). Chosen by
// measurement (BenchmarkEncoding in encoding_bench_test.go; figures in the
// package documentation): msgpack entries are smaller and encode and
// decode faster than encoding/json for the two entries that dominate the log, plan results
// and job registrations. The handle is package wire's, which clients'
// reports share.
var msgpackHandle = wire.Handle

// Encode returns a log entry: the type byte followed by req encoded, in a
// slice whose capacity is its length (see wire.EncodeAfter).
func Encode(t MessageType, req any) ([]byte, error) {
	b, err := wire.EncodeAfter([]byte{byte(t)}, req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrEncode, t, err)
	}
	return b, nil
}

// decode decodes an entry's payload into out. Bad input is an error, never
// a panic (wire.Decode recovers the decoder's), so that no log entry can
// take a server down.
func decode(payload []byte, out any) error {
	if err := wire.Decode(payload, out); err != nil {
		return fmt.Errorf("%w: %w", ErrDecode, err)
	}
	return nil
}

// newRequest returns a pointer to a zero request of the type, or nil if the
// type is unknown.
func newRequest(t MessageType) any {
	switch t {
	case NodeRegisterRequestType:
		return &structs.NodeRegisterRequest{}
	case NodeUpdateStatusRequestType:
		return &structs.NodeUpdateStatusRequest{}
	case JobRegisterRequestType:
		return &structs.JobRegisterRequest{}
	case JobDeregisterRequestType:
		return &structs.JobDeregisterRequest{}
	case EvalUpdateRequestType:
		return &structs.EvalUpdateRequest{}
	case ApplyPlanResultsRequestType:
		return &structs.ApplyPlanResultsRequest{}
	case AllocClientUpdateRequestType:
		return &structs.AllocClientUpdateRequest{}
	case DeploymentStatusUpdateRequestType:
		return &structs.DeploymentStatusUpdateRequest{}
	case DeploymentPromoteRequestType:
		return &structs.DeploymentPromoteRequest{}
	case DeploymentAllocHealthRequestType:
		return &structs.DeploymentAllocHealthRequest{}
	case JobStabilityRequestType:
		return &structs.JobStabilityRequest{}
	case AllocUpdateDesiredTransitionRequestType:
		return &structs.AllocUpdateDesiredTransitionRequest{}
	case NodeDeregisterRequestType:
		return &structs.NodeDeregisterRequest{}
	case EvalReapRequestType:
		return &structs.EvalReapRequest{}
	case AutopilotSetConfigRequestType:
		return &structs.AutopilotSetConfigRequest{}
	case ACLTokenBootstrapRequestType:
		return &structs.ACLTokenBootstrapRequest{}
	case ACLPolicyUpsertRequestType:
		return &structs.ACLPolicyUpsertRequest{}
	case ACLPolicyDeleteRequestType:
		return &structs.ACLPolicyDeleteRequest{}
	case ACLTokenUpsertRequestType:
		return &structs.ACLTokenUpsertRequest{}
	case ACLTokenDeleteRequestType:
		return &structs.ACLTokenDeleteRequest{}
	case ScalingEventRequestType:
		return &structs.ScalingEventRequest{}
	case NodeUpdateDrainRequestType:
		return &structs.NodeUpdateDrainRequest{}
	case NodeUpdateEligibilityRequestType:
		return &structs.NodeUpdateEligibilityRequest{}
	case VarApplyRequestType:
		return &structs.VarApplyRequest{}
	case RootKeyUpsertRequestType:
		return &structs.RootKeyUpsertRequest{}
	case RootKeyDeleteRequestType:
		return &structs.RootKeyDeleteRequest{}
	case ServiceRegistrationDeleteRequestType:
		return &structs.ServiceRegistrationDeleteRequest{}
	case JobRestartRequestType:
		return &structs.JobRestartRequest{}
	case ACLRoleUpsertRequestType:
		return &structs.ACLRoleUpsertRequest{}
	case ACLRoleDeleteRequestType:
		return &structs.ACLRoleDeleteRequest{}
	case ACLAuthMethodUpsertRequestType:
		return &structs.ACLAuthMethodUpsertRequest{}
	case ACLAuthMethodDeleteRequestType:
		return &structs.ACLAuthMethodDeleteRequest{}
	case ACLBindingRuleUpsertRequestType:
		return &structs.ACLBindingRuleUpsertRequest{}
	case ACLBindingRuleDeleteRequestType:
		return &structs.ACLBindingRuleDeleteRequest{}
	case OneTimeTokenUpsertRequestType:
		return &structs.OneTimeTokenUpsertRequest{}
	case OneTimeTokenExchangeRequestType:
		return &structs.OneTimeTokenExchangeRequest{}
	case AnalysisMeasurementRequestType, AnalysisRunRequestType:
		return &structs.DeploymentAnalysisRequest{}
	case SchedulerSetConfigRequestType:
		return &structs.SchedulerSetConfigRequest{}
	case NamespaceUpsertRequestType:
		return &structs.NamespaceUpsertRequest{}
	case NamespaceDeleteRequestType:
		return &structs.NamespaceDeleteRequest{}
	case NodePoolUpsertRequestType:
		return &structs.NodePoolUpsertRequest{}
	case NodePoolDeleteRequestType:
		return &structs.NodePoolDeleteRequest{}
	case VarLockRequestType:
		return &structs.VarLockRequest{}
	case JobRegisterAtVersionRequestType:
		return &structs.JobRegisterAtVersionRequest{}
	}
	return nil
}
