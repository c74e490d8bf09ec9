package jobspec

import (
	"fmt"
	"slices"

	"github.com/droverhq/drover/structs"
)

// parameterized builds a job's parameterized block, as Nomad's: batch and
// sysbatch jobs only, payload "optional" unless it says "required" or
// "forbidden", and no meta key both required and optional. It may be
// combined with periodic: each dispatched child is then a periodic job.
func (b *builder) parameterized(typ string, ap *specParameterized) *structs.ParameterizedJobConfig {
	if ap == nil {
		return nil
	}
	p := &structs.ParameterizedJobConfig{
		Payload:      orStr(&ap.Payload, structs.DispatchPayloadOptional),
		MetaRequired: slices.Clone(ap.MetaRequired),
		MetaOptional: slices.Clone(ap.MetaOptional),
	}
	if typ != structs.JobTypeBatch && typ != structs.JobTypeSysBatch {
		b.err("Job.ParameterizedJob", "is only allowed for batch and sysbatch jobs (got %s)", typ)
	}
	switch p.Payload {
	case structs.DispatchPayloadOptional, structs.DispatchPayloadRequired, structs.DispatchPayloadForbidden:
	default:
		b.err("Job.ParameterizedJob.Payload", "must be %q, %q or %q (got %q)",
			structs.DispatchPayloadOptional, structs.DispatchPayloadRequired, structs.DispatchPayloadForbidden, p.Payload)
	}
	for i, k := range p.MetaOptional {
		if slices.Contains(p.MetaRequired, k) {
			b.err(fmt.Sprintf("Job.ParameterizedJob.MetaOptional[%d]", i), "%q is also in meta_required: a key is either required or optional", k)
		}
	}
	for _, list := range []struct {
		name string
		keys []string
	}{{"MetaRequired", p.MetaRequired}, {"MetaOptional", p.MetaOptional}} {
		for i, k := range list.keys {
			if k == "" {
				b.err(fmt.Sprintf("Job.ParameterizedJob.%s[%d]", list.name, i), "must not be empty")
			}
		}
	}
	return p
}

// scaling builds a group's scaling block, as Nomad's: max is required,
// min defaults to the group's count, enabled to true, type to
// "horizontal"; the count must lie within min and max. The servers fill
// in its ID and target when the job is registered.
func (b *builder) scaling(path, typ string, count int, as *specScaling) *structs.ScalingPolicy {
	if as == nil {
		return nil
	}
	path += ".Scaling"
	p := &structs.ScalingPolicy{
		Type: orStr(&as.Type, structs.ScalingPolicyTypeHorizontal), Enabled: true,
		Min: int64(count), Policy: as.Policy,
	}
	lay(&p.Enabled, as.Enabled)
	if as.Min != nil {
		p.Min = *as.Min
	}
	if p.Type != structs.ScalingPolicyTypeHorizontal {
		b.err(path+".Type", "must be %q for a group (got %q); task scaling blocks are not supported by drover", structs.ScalingPolicyTypeHorizontal, p.Type)
	}
	if structs.PerNode(typ) {
		b.err(path, "is not allowed for %s jobs (they run on every node and have no count)", typ)
	}
	if as.Max == nil {
		b.err(path, "needs max (the largest count an autoscaler or job scale may set)")
		return p
	}
	p.Max = *as.Max
	switch {
	case p.Min < 0:
		b.err(path+".Min", "must not be negative (got %d)", p.Min)
	case p.Max < 0:
		b.err(path+".Max", "must not be negative (got %d)", p.Max)
	case p.Max < p.Min:
		b.err(path+".Max", "must not be less than min (%d < %d)", p.Max, p.Min)
	case int64(count) < p.Min:
		b.err(path+".Min", "must not be greater than the group's count (%d > %d)", p.Min, count)
	case int64(count) > p.Max:
		b.err(path+".Max", "must not be less than the group's count (%d < %d)", p.Max, count)
	}
	return p
}
