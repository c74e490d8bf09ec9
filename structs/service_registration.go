package structs

import "slices"

// ServiceRegistration is one instance of a service with provider "nomad":
// an allocation advertising a service block's name at an address and
// port. Its JSON is Nomad's (api.ServiceRegistration). The servers derive
// registrations from the allocations they store (see package state,
// state_services.go); nothing else writes them.
type ServiceRegistration struct {
	// ID is Nomad's: _nomad-task-<alloc ID>-<task>-<service>-<port label>,
	// where <task> is group-<group name> for a group's service.
	ID          string
	ServiceName string
	Namespace   string
	NodeID      string
	Datacenter  string
	JobID       string
	AllocID     string
	Tags        []string
	Address     string
	Port        int
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (r *ServiceRegistration) Copy() *ServiceRegistration {
	if r == nil {
		return nil
	}
	c := *r
	c.Tags = slices.Clone(r.Tags)
	return &c
}

// SameContent reports whether r and o register the same thing, indexes
// aside.
func (r *ServiceRegistration) SameContent(o *ServiceRegistration) bool {
	return r.ID == o.ID && r.ServiceName == o.ServiceName && r.Namespace == o.Namespace &&
		r.NodeID == o.NodeID && r.Datacenter == o.Datacenter && r.JobID == o.JobID &&
		r.AllocID == o.AllocID && slices.Equal(r.Tags, o.Tags) && r.Address == o.Address && r.Port == o.Port
}

// ServiceRegistrationListStub is one namespace's services, as
// GET /v1/services lists them.
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// ServiceRegistrationStub is one service of a namespace: its name and the
// union of its instances' tags, sorted and without repeats.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// ServiceRegistrationDeleteRequest deletes one registration by hand
// (DELETE /v1/service/{name}/{id}). A running allocation's registration
// comes back when the servers next recompute its registrations (see
// package state, state_services.go).
type ServiceRegistrationDeleteRequest struct {
	Namespace   string
	ServiceName string
	ID          string
}

// Service on_update values, as Nomad's: what a check's result counts for
// in a deployment's health.
const (
	// OnUpdateRequireHealthy: the check must pass (the default).
	OnUpdateRequireHealthy = "require_healthy"
	// OnUpdateIgnoreWarnings: a warning counts as passing.
	OnUpdateIgnoreWarnings = "ignore_warnings"
	// OnUpdateIgnore: the check does not count.
	OnUpdateIgnore = "ignore"
)

// Service address_mode values drover supports: auto and host advertise
// the host address of its port (the node's address, or the port's host
// network address); alloc, in a group the client networks in bridge
// mode, the allocation's own address and the port's "to" port.
const (
	AddressModeAuto  = "auto"
	AddressModeHost  = "host"
	AddressModeAlloc = "alloc"
)

// AllocCheckStatus is the latest result of one check of an allocation's
// nomad services, as GET /v1/client/allocation/{id}/checks answers it
// (Nomad's api.AllocCheckStatus), keyed by ID.
type AllocCheckStatus struct {
	// ID is stable for the allocation and the check.
	ID      string
	Check   string
	Group   string
	Task    string `json:",omitempty"`
	Service string
	// Mode is "healthiness", or "readiness" for a check whose on_update
	// is ignore (it does not decide the deployment's health), as Nomad's.
	Mode string
	// Status is "success" or "failure"; Output says why (a script check's
	// warning is a failure whose output says so).
	Status string
	Output string
	// StatusCode is unset: drover's checks keep no HTTP status.
	StatusCode int `json:",omitempty"`
	// Timestamp is the result's time, Unix seconds.
	Timestamp int64
}

// Check status modes and statuses, as Nomad's.
const (
	CheckModeHealthiness = "healthiness"
	CheckModeReadiness   = "readiness"
	CheckStatusSuccess   = "success"
	CheckStatusFailure   = "failure"
)
