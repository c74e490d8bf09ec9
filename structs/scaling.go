package structs

// JobTrackedScalingEvents is how many scaling events a group keeps, as
// Nomad's.
const JobTrackedScalingEvents = 20

// ScalingEvent is one scaling of a task group, or an attempt at one (an
// error or a message from an autoscaler), as Nomad's.
type ScalingEvent struct {
	// Time is the leader's clock, UnixNano.
	Time uint64
	// Count is the group's new count; nil for an event that changed none.
	Count         *int64
	PreviousCount int64
	Message       string
	Error         bool
	Meta          map[string]any
	// EvalID is the evaluation the scaling created, if any.
	EvalID      *string
	CreateIndex uint64
}

// JobScalingEvents is a job's scaling events by group, newest first, at
// most JobTrackedScalingEvents per group.
type JobScalingEvents struct {
	Namespace     string
	JobID         string
	ScalingEvents map[string][]*ScalingEvent
	ModifyIndex   uint64
}

// ScalingEventRequest records a scaling event of one group of a job: in a
// JobRegisterRequest (a count change, with its new version and eval), or
// alone (an event that changes no count).
type ScalingEventRequest struct {
	Namespace string
	JobID     string
	TaskGroup string
	Event     *ScalingEvent
}

// ScalingPolicyTypeHorizontal is the one kind of scaling policy drover
// keeps: a group's count between Min and Max, as Nomad's.
const ScalingPolicyTypeHorizontal = "horizontal"

// The keys of a scaling policy's Target, as Nomad's.
const (
	ScalingTargetNamespace = "Namespace"
	ScalingTargetJob       = "Job"
	ScalingTargetGroup     = "Group"
)

// ScalingPolicy is a group's scaling block, as Nomad's: the bounds of its
// count, and a policy drover stores for an external autoscaler (the
// nomad-autoscaler reads it through /v1/scaling/policies) but never reads.
// The leader mints ID when the policy is first registered and keeps it
// across the job's versions; the store stamps the indexes.
type ScalingPolicy struct {
	ID        string
	Type      string
	Namespace string `json:",omitempty"`
	// Target names the group: Namespace, Job and Group.
	Target  map[string]string
	Policy  map[string]any
	Min     int64
	Max     int64
	Enabled bool
	// CreateIndex is the index of the job version that first had the
	// policy; ModifyIndex of the last one that changed it.
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (p *ScalingPolicy) Copy() *ScalingPolicy {
	if p == nil {
		return nil
	}
	c := *p
	c.Target = copyMap(p.Target)
	c.Policy = copyAnyMap(p.Policy)
	return &c
}

// SameSpec reports whether p and o ask for the same scaling (ID and
// indexes aside).
func (p *ScalingPolicy) SameSpec(o *ScalingPolicy) bool {
	if p == nil || o == nil {
		return p == o
	}
	a, b := p.Copy(), o.Copy()
	a.ID, b.ID = "", ""
	a.CreateIndex, a.ModifyIndex, b.CreateIndex, b.ModifyIndex = 0, 0, 0, 0
	return deepEqualJSON(a, b)
}

// Stub returns the list form of the policy.
func (p *ScalingPolicy) Stub() *ScalingPolicyListStub {
	return &ScalingPolicyListStub{ID: p.ID, Enabled: p.Enabled, Type: p.Type, Target: copyMap(p.Target),
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// ScalingPolicyListStub is the summary /v1/scaling/policies returns, as
// Nomad's.
type ScalingPolicyListStub struct {
	ID          string
	Enabled     bool
	Type        string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// ScalingPolicies returns the job's group scaling policies, in group
// order.
func (j *Job) ScalingPolicies() []*ScalingPolicy {
	var out []*ScalingPolicy
	for _, tg := range j.TaskGroups {
		if tg.Scaling != nil {
			out = append(out, tg.Scaling)
		}
	}
	return out
}

// CanonicalizeScaling fills in what the servers set in a job's scaling
// policies before it is registered: each policy's type, namespace and
// target, and its ID — the ID of the same group's policy in existing (the
// job's current version, nil for a new job), so that a policy keeps its ID
// across versions, else one from newID.
func CanonicalizeScaling(j, existing *Job, newID func() string) {
	for _, tg := range j.TaskGroups {
		p := tg.Scaling
		if p == nil {
			continue
		}
		if p.Type == "" {
			p.Type = ScalingPolicyTypeHorizontal
		}
		p.Namespace = j.Namespace
		p.Target = map[string]string{ScalingTargetNamespace: j.Namespace, ScalingTargetJob: j.ID, ScalingTargetGroup: tg.Name}
		p.ID, p.CreateIndex, p.ModifyIndex = "", 0, 0
		if old := existing.LookupTaskGroup(tg.Name); old != nil && old.Scaling != nil && old.Scaling.ID != "" {
			p.ID = old.Scaling.ID
			p.CreateIndex = old.Scaling.CreateIndex
			if p.SameSpec(old.Scaling) {
				p.ModifyIndex = old.Scaling.ModifyIndex
			}
		}
		if p.ID == "" {
			p.ID = newID()
		}
	}
}

// StampScaling sets the indexes of a job's scaling policies as it is
// stored at index: a new policy was created and modified there, a changed
// one modified there; an unchanged one keeps what CanonicalizeScaling
// copied from the previous version.
func StampScaling(j *Job, index uint64) {
	for _, tg := range j.TaskGroups {
		if p := tg.Scaling; p != nil {
			if p.CreateIndex == 0 {
				p.CreateIndex = index
			}
			if p.ModifyIndex == 0 {
				p.ModifyIndex = index
			}
		}
	}
}
