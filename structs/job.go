package structs

// Job types.
const (
	JobTypeService = "service"
	JobTypeBatch   = "batch"
	JobTypeSystem  = "system"
	// JobTypeSysBatch runs once on every eligible node: placed as a system
	// job, finished as a batch job.
	JobTypeSysBatch = "sysbatch"
)

// PerNode reports whether jobs of type t run one allocation on every
// eligible node (system and sysbatch) rather than count allocations.
func PerNode(t string) bool { return t == JobTypeSystem || t == JobTypeSysBatch }

// RunsToCompletion reports whether the tasks of jobs of type t are done
// when they exit successfully (batch and sysbatch) rather than restarted.
func RunsToCompletion(t string) bool { return t == JobTypeBatch || t == JobTypeSysBatch }

// Job statuses, as Nomad reports them.
const (
	JobStatusPending = "pending"
	JobStatusRunning = "running"
	JobStatusDead    = "dead"
)

// Defaults applied to a job that does not set them.
const (
	DefaultNamespace   = "default"
	DefaultRegion      = "global"
	DefaultDatacenter  = "dc1"
	DefaultNodePool    = "default"
	DefaultJobPriority = 50
	MinJobPriority     = 1
	MaxJobPriority     = 100
)

// Job is the unit a user submits: one or more task groups with their
// placement rules and update strategy.
type Job struct {
	Region      string
	Namespace   string
	ID          string
	Name        string
	Type        string
	Priority    int
	AllAtOnce   bool
	Datacenters []string
	NodePool    string
	Constraints []*Constraint `json:",omitempty"`
	Affinities  []*Affinity   `json:",omitempty"`
	Spreads     []*Spread     `json:",omitempty"`
	TaskGroups  []*TaskGroup
	// Update is the job-level update block as written (defaulted). Each task
	// group carries its own merged copy; the scheduler reads the group's.
	Update *UpdateStrategy `json:",omitempty"`
	// Migrate is the job-level migrate block as written (defaulted); each
	// group carries its own merged copy. Nil when not written.
	Migrate *MigrateStrategy `json:",omitempty"`
	Meta    map[string]string
	// Periodic makes the job a periodic parent (batch and sysbatch only):
	// the leader launches a child job at each time of its specs.
	Periodic *PeriodicConfig `json:",omitempty"`
	// ParameterizedJob makes the job a parameterized parent (batch and
	// sysbatch only): each dispatch registers a child job.
	ParameterizedJob *ParameterizedJobConfig `json:",omitempty"`
	// Multiregion rolls the job out region by region (structs/multiregion.go).
	Multiregion *Multiregion `json:",omitempty"`
	// Scaling policies live in their groups (TaskGroup.Scaling).

	// Set by the servers, never by the job file.
	// ParentID names the periodic or parameterized job a child was
	// launched from.
	ParentID string
	// Dispatched marks a child of a parameterized job; Payload is its
	// dispatch's payload (at most DispatchPayloadSizeLimit bytes, stored
	// as given) and DispatchIdempotencyToken its token, if any.
	Dispatched               bool   `json:",omitempty"`
	DispatchIdempotencyToken string `json:",omitempty"`
	Payload                  []byte `json:",omitempty"`
	Stop                     bool
	Status                   string
	StatusDescription        string
	Stable                   bool
	Version                  uint64
	SubmitTime               int64
	CreateIndex              uint64
	ModifyIndex              uint64
	JobModifyIndex           uint64
	// RevertOf, set by the servers on a version that a revert (job revert,
	// auto_revert, on_failure = "revert") registered, names the version it
	// restores. Its deployment skips canaries, first batch and checkpoints.
	RevertOf *uint64 `json:",omitempty"`
}

// LookupTaskGroup returns the named group, or nil.
func (j *Job) LookupTaskGroup(name string) *TaskGroup {
	if j == nil {
		return nil
	}
	for _, tg := range j.TaskGroups {
		if tg.Name == name {
			return tg
		}
	}
	return nil
}

// Stopped reports whether the job is stopped (or nil).
func (j *Job) Stopped() bool { return j == nil || j.Stop }

// Copy returns a deep copy of the job.
func (j *Job) Copy() *Job {
	if j == nil {
		return nil
	}
	c := *j
	c.Datacenters = copySlice(j.Datacenters)
	c.Constraints = copyConstraints(j.Constraints)
	c.Affinities = copyAffinities(j.Affinities)
	c.Spreads = copySpreads(j.Spreads)
	if j.TaskGroups != nil {
		c.TaskGroups = make([]*TaskGroup, len(j.TaskGroups))
		for i, tg := range j.TaskGroups {
			c.TaskGroups[i] = tg.Copy()
		}
	}
	c.Update = j.Update.Copy()
	c.Migrate = j.Migrate.Copy()
	c.Meta = copyMap(j.Meta)
	c.Multiregion = j.Multiregion.Copy()
	c.Periodic = j.Periodic.Copy()
	c.ParameterizedJob = j.ParameterizedJob.Copy()
	c.Payload = copySlice(j.Payload)
	if j.RevertOf != nil {
		v := *j.RevertOf
		c.RevertOf = &v
	}
	return &c
}

// SpecChanged reports whether the user-supplied part of the job differs from
// other's: the fields a job file sets, ignoring versions, indexes, status and
// stability. An identical re-submission creates no new version.
func (j *Job) SpecChanged(other *Job) bool {
	if j == nil || other == nil {
		return j != other
	}
	a, b := j.Copy(), other.Copy()
	for _, c := range []*Job{a, b} {
		c.Status, c.StatusDescription = "", ""
		c.Stable = false
		c.Version = 0
		c.SubmitTime = 0
		c.CreateIndex, c.ModifyIndex, c.JobModifyIndex = 0, 0, 0
		c.RevertOf = nil
	}
	return !deepEqualJSON(a, b)
}

// JobListStub is the summary /v1/jobs returns.
type JobListStub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64
}

// Stub returns the list form of the job.
func (j *Job) Stub(summary *JobSummary) *JobListStub {
	return &JobListStub{
		ID:                j.ID,
		Name:              j.Name,
		Namespace:         j.Namespace,
		Datacenters:       copySlice(j.Datacenters),
		NodePool:          j.NodePool,
		Type:              j.Type,
		Priority:          j.Priority,
		ParentID:          j.ParentID,
		Periodic:          j.IsPeriodic(),
		ParameterizedJob:  j.IsParameterized(),
		Stop:              j.Stop,
		Status:            j.Status,
		StatusDescription: j.StatusDescription,
		JobSummary:        summary,
		CreateIndex:       j.CreateIndex,
		ModifyIndex:       j.ModifyIndex,
		JobModifyIndex:    j.JobModifyIndex,
		SubmitTime:        j.SubmitTime,
	}
}

// JobSummary counts a job's allocations per group and client status.
// Children is always set, as Nomad's: a periodic job's children by status,
// zero for any other job.
type JobSummary struct {
	JobID       string
	Namespace   string
	Summary     map[string]TaskGroupSummary
	Children    *JobChildrenSummary
	CreateIndex uint64
	ModifyIndex uint64
}

// JobChildrenSummary counts a parent job's child jobs by status.
type JobChildrenSummary struct {
	Pending int64
	Running int64
	Dead    int64
}

// TaskGroupSummary counts one group's allocations by client status.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int
}
