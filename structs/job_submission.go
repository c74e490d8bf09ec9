package structs

import (
	"context"
	"maps"
)

// JobSubmission is the source a job version was submitted from, as
// Nomad's: kept one per version (as many as the job's tracked versions),
// deleted with the job. Namespace, JobID, Version and JobModifyIndex are
// set by the store.
type JobSubmission struct {
	Source        string
	Format        string
	VariableFlags map[string]string
	Variables     string

	Namespace      string
	JobID          string
	Version        uint64
	JobModifyIndex uint64
}

// MaxJobSourceSize bounds a submission's Source, Variables and variable
// flags together, as Nomad's job_max_source_size default (1M): a larger
// submission is discarded with a warning, the job still registered.
const MaxJobSourceSize = 1_000_000

// Size is the submission's size as Nomad measures it.
func (s *JobSubmission) Size() int {
	if s == nil {
		return 0
	}
	n := len(s.Source) + len(s.Variables)
	for k, v := range s.VariableFlags {
		n += len(k) + len(v)
	}
	return n
}

// Copy returns a deep copy (nil for nil).
func (s *JobSubmission) Copy() *JobSubmission {
	if s == nil {
		return nil
	}
	c := *s
	c.VariableFlags = maps.Clone(s.VariableFlags)
	return &c
}

type jobSubmissionKey struct{}

// WithJobSubmission returns ctx carrying the source of the job being
// registered; the HTTP layer puts it there, the leader writes it with the
// registration (JobRegisterRequest.Submission).
func WithJobSubmission(ctx context.Context, s *JobSubmission) context.Context {
	if s == nil {
		return ctx
	}
	return context.WithValue(ctx, jobSubmissionKey{}, s)
}

// JobSubmissionFrom returns the submission ctx carries, or nil.
func JobSubmissionFrom(ctx context.Context) *JobSubmission {
	s, _ := ctx.Value(jobSubmissionKey{}).(*JobSubmission)
	return s
}
