package jobspec

import (
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The update block lives in this file alone: its fields as written
// (specUpdate), the table of its fields (updateSpec), how a job file is
// decoded into it, the merge (job-level block, then the group's own
// fields, then defaults) and the rules of ROLLOUT.md part A.
//
// To add a field (ROLLOUT.md part C: max_surge, max_unhealthy, on_failure,
// zones, checkpoints, max_parallel = "25%"):
//  1. add it to structs.UpdateStrategy, with its default in
//     structs.DefaultUpdateStrategy (the defaults are the domain's, shared
//     with the servers);
//  2. add a field to specUpdate, a pointer so that "not written" differs
//     from the zero value, named as the JSON field;
//  3. add one row to updateSpec: its job-file name, how a job file writes
//     it (decode) and how it is laid over a strategy (lay) — plainField
//     builds both for a plain value. The row also puts it in the grammar
//     table, so that job files and API JSON accept it, and makes the
//     merge and the error locations cover it;
//  4. add its rules to checkUpdate.
//
// A field whose JSON form is not one of Nomad's plain kinds (a count or a
// percentage, say) gets a type of its own with an UnmarshalJSON method,
// and the JSON walker (jsonWalker.value) learns to check that kind.

// specUpdate is an update block (job or group) as written.
type specUpdate struct {
	Stagger          *time.Duration
	MaxParallel      *int
	HealthCheck      *string
	MinHealthyTime   *time.Duration
	HealthyDeadline  *time.Duration
	ProgressDeadline *time.Duration
	Canary           *int
	AutoRevert       *bool
	AutoPromote      *bool
	// StaggerSet is drover's own field, in API JSON only: drover's job
	// JSON carries it so that it reads back as it was.
	StaggerSet *bool
}

// updateField is one field of the update block.
type updateField struct {
	HCL  string // name in a job file: "max_parallel"
	JSON string // name in API JSON and in specUpdate: "MaxParallel"
	// decode reads the field from its attribute a (nil when not written)
	// of a job file; path is its JSON path, field its job-file name.
	decode func(d *decoder, a *hclsyntax.Attribute, path, field string, u *specUpdate)
	// lay copies the field over s when u sets it.
	lay func(s *structs.UpdateStrategy, u *specUpdate)
}

// updateSpec lists the update block's fields, in the grammar's order.
var updateSpec = []updateField{
	plainField("stagger", "Stagger", (*decoder).dur,
		func(u *specUpdate) **time.Duration { return &u.Stagger },
		func(s *structs.UpdateStrategy) *time.Duration { return &s.Stagger }),
	plainField("max_parallel", "MaxParallel", (*decoder).int,
		func(u *specUpdate) **int { return &u.MaxParallel },
		func(s *structs.UpdateStrategy) *int { return &s.MaxParallel }),
	plainField("health_check", "HealthCheck", (*decoder).str,
		func(u *specUpdate) **string { return &u.HealthCheck },
		func(s *structs.UpdateStrategy) *string { return &s.HealthCheck }),
	plainField("min_healthy_time", "MinHealthyTime", (*decoder).dur,
		func(u *specUpdate) **time.Duration { return &u.MinHealthyTime },
		func(s *structs.UpdateStrategy) *time.Duration { return &s.MinHealthyTime }),
	plainField("healthy_deadline", "HealthyDeadline", (*decoder).dur,
		func(u *specUpdate) **time.Duration { return &u.HealthyDeadline },
		func(s *structs.UpdateStrategy) *time.Duration { return &s.HealthyDeadline }),
	plainField("progress_deadline", "ProgressDeadline", (*decoder).dur,
		func(u *specUpdate) **time.Duration { return &u.ProgressDeadline },
		func(s *structs.UpdateStrategy) *time.Duration { return &s.ProgressDeadline }),
	plainField("canary", "Canary", (*decoder).int,
		func(u *specUpdate) **int { return &u.Canary },
		func(s *structs.UpdateStrategy) *int { return &s.Canary }),
	plainField("auto_revert", "AutoRevert", (*decoder).bool,
		func(u *specUpdate) **bool { return &u.AutoRevert },
		func(s *structs.UpdateStrategy) *bool { return &s.AutoRevert }),
	plainField("auto_promote", "AutoPromote", (*decoder).bool,
		func(u *specUpdate) **bool { return &u.AutoPromote },
		func(s *structs.UpdateStrategy) *bool { return &s.AutoPromote }),
	// API JSON alone: job files say it by writing stagger (staggerSet).
	plainField("", "StaggerSet", (*decoder).bool,
		func(u *specUpdate) **bool { return &u.StaggerSet },
		func(s *structs.UpdateStrategy) *bool { return &s.StaggerSet }),
}

// plainField is the row of a field written as one value of type T, which
// dec reads from a job file; in and out point at the field in a block as
// written and in a strategy.
func plainField[T any](hcl, json string, dec func(*decoder, *hclsyntax.Attribute, string, string) *T,
	in func(*specUpdate) **T, out func(*structs.UpdateStrategy) *T) updateField {
	return updateField{
		HCL:  hcl,
		JSON: json,
		decode: func(d *decoder, a *hclsyntax.Attribute, path, field string, u *specUpdate) {
			*in(u) = dec(d, a, path, field)
		},
		lay: func(s *structs.UpdateStrategy, u *specUpdate) {
			if v := *in(u); v != nil {
				*out(s) = *v
			}
		},
	}
}

// staggerSet marks a merged strategy whose stagger the job wrote, at job
// or group level (structs.UpdateStrategy.StaggerSet): only then does a
// rollout pause between batches. API JSON that states StaggerSet (drover's
// own job JSON) is taken as written; other API JSON counts as writing
// stagger only with a value other than Nomad's 30s default, which Nomad's
// Go client fills in wherever a job wrote none.
func (b *builder) staggerSet(u *structs.UpdateStrategy, blocks ...*specUpdate) {
	written := false
	for _, a := range blocks {
		if a == nil {
			continue
		}
		if a.StaggerSet != nil {
			return
		}
		written = written || a.Stagger != nil
	}
	if written && (!b.lc.api || u.Stagger != structs.DefaultStagger) {
		u.StaggerSet = true
	}
}

// updateGrammar is the update block's part of the grammar table.
func updateGrammar() []element {
	out := make([]element, 0, len(updateSpec))
	for _, f := range updateSpec {
		out = append(out, element{HCL: f.HCL, JSON: f.JSON, Kind: attr, Support: supported})
	}
	return out
}

// update decodes an update block of a job file.
func (d *decoder) update(b *hclsyntax.Block, path string) *specUpdate {
	d.lc.set(path, d.at(b.TypeRange, "update"))
	attrs, _ := d.content(b.Body, "update")
	u := &specUpdate{}
	for _, f := range updateSpec {
		f.decode(d, attrs[f.HCL], path+"."+f.JSON, "update."+f.HCL, u)
	}
	return u
}

// layUpdate copies the fields a block sets over u.
func layUpdate(u *structs.UpdateStrategy, a *specUpdate) {
	if a == nil {
		return
	}
	for _, f := range updateSpec {
		f.lay(u, a)
	}
}

// jobUpdate is the job-level block, defaulted and checked; nil when the
// job has none. A batch job may not have one.
func (b *builder) jobUpdate(jobType string, ju *specUpdate) *structs.UpdateStrategy {
	if ju == nil {
		return nil
	}
	if jobType == structs.JobTypeBatch {
		b.err("Job.Update", "is not allowed for batch jobs")
		return nil
	}
	u := structs.DefaultUpdateStrategy()
	layUpdate(u, ju)
	b.staggerSet(u, ju)
	b.checkUpdate("", "Job.Update", u, 0, nil)
	return u
}

// groupUpdate merges a group's strategy: the defaults, the job-level block
// ju over them, then the fields the group's own block gu sets. Batch
// groups have none. Each error names the block the offending value came
// from.
func (b *builder) groupUpdate(path string, jobType string, tg *structs.TaskGroup, ju, gu *specUpdate) *structs.UpdateStrategy {
	if jobType == structs.JobTypeBatch {
		if gu != nil {
			b.err(path+".Update", "is not allowed for batch jobs")
		}
		return nil
	}
	u := structs.DefaultUpdateStrategy()
	src := map[string]string{}
	if ju != nil {
		layUpdate(u, ju)
		for _, f := range updateSpec {
			src[f.JSON] = "Job.Update." + f.JSON
		}
	}
	if gu != nil {
		layUpdate(u, gu)
		for _, f := range updateSpec {
			if p := path + ".Update." + f.JSON; b.lc.has(p) || ju == nil {
				src[f.JSON] = p
			}
		}
	}
	if ju == nil && gu == nil {
		for _, f := range updateSpec {
			src[f.JSON] = path + ".Update." + f.JSON
		}
	}
	b.staggerSet(u, ju, gu)
	b.checkUpdate(tg.Name, path+".Update", u, tg.Count, src)
	return u
}

// checkUpdate applies the rules of ROLLOUT.md part A to a merged strategy.
// src maps each field to the path it came from (nil: updPath.Field);
// count > 0 enables the max_parallel > count warning.
func (b *builder) checkUpdate(group, updPath string, u *structs.UpdateStrategy, count int, src map[string]string) {
	at := func(f string) string {
		if p, ok := src[f]; ok {
			return p
		}
		return updPath + "." + f
	}
	switch u.HealthCheck {
	case structs.UpdateHealthCheckChecks, structs.UpdateHealthCheckTaskStates, structs.UpdateHealthCheckManual:
	default:
		b.err(at("HealthCheck"), "must be checks, task_states or manual (got %q)", u.HealthCheck)
	}
	if u.MaxParallel < 0 {
		b.err(at("MaxParallel"), "must not be negative (got %d)", u.MaxParallel)
	}
	if u.Canary < 0 {
		b.err(at("Canary"), "must not be negative (got %d)", u.Canary)
	}
	if u.MinHealthyTime < 0 {
		b.err(at("MinHealthyTime"), "must not be negative (got %s)", u.MinHealthyTime)
	}
	if u.ProgressDeadline < 0 {
		b.err(at("ProgressDeadline"), "must not be negative (got %s)", u.ProgressDeadline)
	}
	if u.HealthyDeadline <= 0 {
		b.err(at("HealthyDeadline"), "must be positive (got %s)", u.HealthyDeadline)
	}
	if u.Stagger <= 0 {
		b.err(at("Stagger"), "must be positive (got %s)", u.Stagger)
	}
	if u.AutoPromote && u.Canary == 0 {
		b.err(at("AutoPromote"), "needs canary > 0")
	}
	if u.Canary > 0 && u.MaxParallel == 0 {
		b.err(at("Canary"), "needs max_parallel > 0 (max_parallel = 0 means no deployment)")
	}
	if u.HealthyDeadline > 0 && u.MinHealthyTime >= u.HealthyDeadline {
		b.err(at("MinHealthyTime"), "must be less than healthy_deadline (%s >= %s)", u.MinHealthyTime, u.HealthyDeadline)
	}
	if u.ProgressDeadline != 0 && u.HealthyDeadline >= u.ProgressDeadline {
		b.err(at("HealthyDeadline"), "must be less than progress_deadline (%s >= %s)", u.HealthyDeadline, u.ProgressDeadline)
	}
	if count > 0 && u.MaxParallel > count {
		b.r.fieldWarn(b.lc, b.lc.get(at("MaxParallel")), "is greater than the count of group %q (%d > %d)", group, u.MaxParallel, count)
	}
}
