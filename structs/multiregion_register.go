package structs

import (
	"context"
	"maps"
	"slices"
)

// JobRegisterAtVersionRequest registers one region's copy of a multi-region
// job at the version every region of the job takes (the log entry
// JobRegisterAtVersion): the copy is stored as Version even when its spec
// equals the stored job's, so that all regions hold the job at one
// version; the stored job already at Version with the same spec is an
// identical re-submission (no new version, evaluated again); a stored job
// at Version or past it with another spec is a conflict (another
// registration came between). Its own entry type, not a field of
// JobRegisterRequest: a server that did not know the field would store
// another version.
type JobRegisterAtVersionRequest struct {
	Register JobRegisterRequest
	Version  uint64
}

type jobVersionKey struct{}

// WithJobVersion returns ctx carrying the version a registration must
// store (a region's copy of a multi-region job, JobRegisterAtVersionRequest).
func WithJobVersion(ctx context.Context, version uint64) context.Context {
	return context.WithValue(ctx, jobVersionKey{}, version)
}

// JobVersionFrom returns the version ctx asks a registration to store.
func JobVersionFrom(ctx context.Context) (uint64, bool) {
	v, ok := ctx.Value(jobVersionKey{}).(uint64)
	return v, ok
}

// ForRegion returns the copy of a multi-region job that region holds: its
// Region is region, every group's count is the region's count, its
// datacenters and node pool the region's when set, and its meta the job's
// with the region's merged over it. The copy keeps the whole multiregion
// block. Nil when the block does not name region.
func (j *Job) ForRegion(region string) *Job {
	if !j.IsMultiregion() {
		return nil
	}
	r := j.Multiregion.Region(region)
	if r == nil {
		return nil
	}
	c := j.Copy()
	c.Region = region
	for _, tg := range c.TaskGroups {
		tg.Count = r.Count
	}
	if len(r.Datacenters) > 0 {
		c.Datacenters = slices.Clone(r.Datacenters)
	}
	if r.NodePool != "" {
		c.NodePool = r.NodePool
	}
	if len(r.Meta) > 0 {
		if c.Meta == nil {
			c.Meta = map[string]string{}
		}
		maps.Copy(c.Meta, r.Meta)
	}
	return c
}
