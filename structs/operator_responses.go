package structs

// Answers of the operator verbs on deployments and job versions, in
// Nomad's JSON shapes. The leader fills them in; the HTTP API sends them
// as they are.

// DeploymentUpdateResponse answers promote, fail, pause/resume and
// allocation-health: the evaluation created with the change (none for a
// pause), the index of the write, and, when a failure reverted the job,
// the version it went back to.
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	// RevertedJobVersion is the stable version registered again by an
	// auto revert, nil when there was none.
	RevertedJobVersion *uint64
	// Index is the raft index of the write.
	Index uint64
}

// JobRevertResponse answers a job revert, as Nomad's job register
// response: the evaluation and the index of the job's new version.
type JobRevertResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	// JobVersion is the version now current: the reverted spec as a new
	// version, or the current one when the spec is the same.
	JobVersion uint64
	Warnings   string
	Index      uint64
}

// JobStabilityResponse answers marking a job version stable or not.
type JobStabilityResponse struct {
	JobModifyIndex uint64
	Index          uint64
}
