package structs

// JobRef names one version of a job's specification: its namespace and
// ID, its Version, and the JobModifyIndex of the write that made that
// version. Two copies of a job with the same ref have the same
// specification.
type JobRef struct {
	Namespace      string
	ID             string
	Version        uint64
	JobModifyIndex uint64
}

// Ref returns the job's ref; the zero ref for a nil job.
func (j *Job) Ref() JobRef {
	if j == nil {
		return JobRef{}
	}
	return JobRef{Namespace: j.Namespace, ID: j.ID, Version: j.Version, JobModifyIndex: j.JobModifyIndex}
}
