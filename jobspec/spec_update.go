package jobspec

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The update block lives in this file, its zones block in spec_zones.go,
// its job-level group_order in spec_group_order.go:
// its fields as written (specUpdate), the table of its fields
// (updateSpec), how a job file is decoded into it, the merge (job-level
// block, then the group's own fields, then defaults) and the rules of
// website/rollouts.md part A.
//
// To add a field (website/rollouts.md part C: max_surge, max_unhealthy, on_failure,
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
//  4. add its rules to checkUpdate (Nomad's fields) or checkPolicies
//     (drover's own, website/rollouts.md C.8), and name it in droverOnly
//     (nomad_api_test.go) when Nomad's API lacks it.
//
// A field whose JSON form is not one of Nomad's plain kinds (a count or a
// percentage, say) gets a type of its own with an UnmarshalJSON method,
// and the JSON walker (jsonWalker.value) learns to check that kind, as it
// does for structs.Amount (amountField builds the row of such a field).
//
// A field written as a block (zones) is a row of Kind block whose
// decodeBlock reads the block; the block's own fields are rows of a table
// of their own, built the same way (zoneSpec, spec_zones.go), with a spec
// type in blockOf so that API JSON is walked into it.
//
// A field of the job-level block alone (group_order) is a row marked
// JobOnly: it stays in Job.Update, is never laid into a group's merged
// strategy, and is an error in a group's block.

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

	// Drover's rollout policies (website/rollouts.md part C).

	// MaxParallelPercent is max_parallel written as "N%". In API JSON it is
	// a field of its own (MaxParallel stays Nomad's integer); when a block
	// sets it, it wins over the block's MaxParallel, which is recomputed
	// from the group's count. Job files write max_parallel = "25%".
	MaxParallelPercent *int
	MaxSurge           *structs.Amount
	FirstBatch         *structs.Amount
	UnhealthyFirst     *bool
	MaxUnhealthy       *structs.Amount
	MaxFailed          *structs.Amount
	OnFailure          *string
	Checkpoints        *[]structs.Amount
	CheckpointDelay    *time.Duration
	Zones              *specZones
	// Analyses are the analysis "name" blocks (spec_analysis.go).
	Analyses *[]*specAnalysis

	// Job level only (website/rollouts.md#groups-one-at-a-time).
	GroupOrder         *[]string
	PauseBetweenGroups *time.Duration

	// StaggerSet is drover's own field, in API JSON only: drover's job
	// JSON carries it so that it reads back as it was.
	StaggerSet *bool
}

// specRow is one field of a block as written, W (specUpdate), and of its
// merged form, S (structs.UpdateStrategy).
type specRow[W, S any] struct {
	HCL  string // name in a job file: "max_parallel"
	JSON string // name in API JSON and in the spec type: "MaxParallel"
	// Kind is attr, or block for a field written as a block (zones).
	Kind kind
	// JobOnly marks a field of the job-level block alone: a group's
	// merged strategy leaves it out, and a group's block may not write it.
	JobOnly bool
	// decode reads the field from its attribute a (nil when not written)
	// of a job file; path is its JSON path, field its job-file name.
	decode func(d *decoder, a *hclsyntax.Attribute, path, field string, w *W)
	// decodeBlock reads a field of Kind block from its block b (nil when
	// not written).
	decodeBlock func(d *decoder, b *hclsyntax.Block, path, field string, w *W)
	// decodeBlocks, when set, reads a repeated block (analysis "name"):
	// every block written, in order.
	decodeBlocks func(d *decoder, bs []*hclsyntax.Block, path, field string, w *W)
	// lay copies the field over s when w sets it.
	lay func(s *S, w *W)
}

// updateField is one field of the update block.
type updateField = specRow[specUpdate, structs.UpdateStrategy]

// updateSpec lists the update block's fields, in the grammar's order.
var updateSpec = []updateField{
	plainField("stagger", "Stagger", (*decoder).dur,
		func(u *specUpdate) **time.Duration { return &u.Stagger },
		func(s *structs.UpdateStrategy) *time.Duration { return &s.Stagger }),
	{
		// A count, or "N%" (MaxParallelPercent). Either one replaces the
		// other: a group's max_parallel = 3 overrides the job's "25%".
		HCL:    "max_parallel",
		JSON:   "MaxParallel",
		decode: (*decoder).maxParallel,
		lay: func(s *structs.UpdateStrategy, u *specUpdate) {
			if u.MaxParallel != nil {
				s.MaxParallel = *u.MaxParallel
				s.MaxParallelPercent = nil
			}
		},
	},
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
	{
		// API JSON alone: job files write max_parallel = "N%", which the
		// max_parallel row decodes. Laid after MaxParallel, so that a block
		// setting both takes the percentage.
		HCL:    "",
		JSON:   "MaxParallelPercent",
		decode: func(*decoder, *hclsyntax.Attribute, string, string, *specUpdate) {},
		lay: func(s *structs.UpdateStrategy, u *specUpdate) {
			if u.MaxParallelPercent != nil {
				p := *u.MaxParallelPercent
				s.MaxParallelPercent = &p
			}
		},
	},
	amountField("max_surge", "MaxSurge",
		func(u *specUpdate) **structs.Amount { return &u.MaxSurge },
		func(s *structs.UpdateStrategy) **structs.Amount { return &s.MaxSurge }),
	amountField("first_batch", "FirstBatch",
		func(u *specUpdate) **structs.Amount { return &u.FirstBatch },
		func(s *structs.UpdateStrategy) **structs.Amount { return &s.FirstBatch }),
	plainField("unhealthy_first", "UnhealthyFirst", (*decoder).bool,
		func(u *specUpdate) **bool { return &u.UnhealthyFirst },
		func(s *structs.UpdateStrategy) *bool { return &s.UnhealthyFirst }),
	amountField("max_unhealthy", "MaxUnhealthy",
		func(u *specUpdate) **structs.Amount { return &u.MaxUnhealthy },
		func(s *structs.UpdateStrategy) **structs.Amount { return &s.MaxUnhealthy }),
	amountField("max_failed", "MaxFailed",
		func(u *specUpdate) **structs.Amount { return &u.MaxFailed },
		func(s *structs.UpdateStrategy) **structs.Amount { return &s.MaxFailed }),
	plainField("on_failure", "OnFailure", (*decoder).str,
		func(u *specUpdate) **string { return &u.OnFailure },
		func(s *structs.UpdateStrategy) *string { return &s.OnFailure }),
	{
		HCL:  "checkpoints",
		JSON: "Checkpoints",
		decode: func(d *decoder, a *hclsyntax.Attribute, path, field string, u *specUpdate) {
			u.Checkpoints = d.amounts(a, path, field)
		},
		lay: func(s *structs.UpdateStrategy, u *specUpdate) {
			if u.Checkpoints != nil {
				// An empty list written by a group clears the job's.
				s.Checkpoints = slices.Clone(*u.Checkpoints)
			}
		},
	},
	plainField("checkpoint_delay", "CheckpointDelay", (*decoder).dur,
		func(u *specUpdate) **time.Duration { return &u.CheckpointDelay },
		func(s *structs.UpdateStrategy) *time.Duration { return &s.CheckpointDelay }),
	{
		// A block of its own fields (spec_zones.go), merged field by
		// field: a group's zones block is laid over the job's.
		HCL:         "zones",
		JSON:        "Zones",
		Kind:        block,
		decodeBlock: (*decoder).zones,
		lay:         layZones,
	},
	{
		// Named blocks (spec_analysis.go), merged by name: a group's
		// analysis is laid over the job's of the same name, field by field.
		HCL:          "analysis",
		JSON:         "Analyses",
		Kind:         block,
		decodeBlocks: (*decoder).analyses,
		lay:          layAnalyses,
	},
	{
		// Job level only (spec_group_order.go). An empty list is none.
		HCL:     "group_order",
		JSON:    "GroupOrder",
		JobOnly: true,
		decode: func(d *decoder, a *hclsyntax.Attribute, path, field string, u *specUpdate) {
			u.GroupOrder = d.groupOrder(a, path, field)
		},
		lay: func(s *structs.UpdateStrategy, u *specUpdate) {
			if u.GroupOrder != nil {
				s.GroupOrder = nil
				if len(*u.GroupOrder) > 0 {
					s.GroupOrder = slices.Clone(*u.GroupOrder)
				}
			}
		},
	},
	jobOnly(plainField("pause_between_groups", "PauseBetweenGroups", (*decoder).dur,
		func(u *specUpdate) **time.Duration { return &u.PauseBetweenGroups },
		func(s *structs.UpdateStrategy) *time.Duration { return &s.PauseBetweenGroups })),
	// API JSON alone: job files say it by writing stagger (staggerSet).
	plainField("", "StaggerSet", (*decoder).bool,
		func(u *specUpdate) **bool { return &u.StaggerSet },
		func(s *structs.UpdateStrategy) *bool { return &s.StaggerSet }),
}

// plainField is the row of a field written as one value of type T, which
// dec reads from a job file; in and out point at the field in a block as
// written and in a strategy.
func plainField[W, S, T any](hcl, json string, dec func(*decoder, *hclsyntax.Attribute, string, string) *T,
	in func(*W) **T, out func(*S) *T) specRow[W, S] {
	return specRow[W, S]{
		HCL:  hcl,
		JSON: json,
		decode: func(d *decoder, a *hclsyntax.Attribute, path, field string, w *W) {
			*in(w) = dec(d, a, path, field)
		},
		lay: func(s *S, w *W) {
			if v := *in(w); v != nil {
				*out(s) = *v
			}
		},
	}
}

// jobOnly marks a row as a field of the job-level block alone.
func jobOnly[W, S any](r specRow[W, S]) specRow[W, S] {
	r.JobOnly = true
	return r
}

// written reports whether the block as written w sets the field of row f
// (the field of W named f.JSON, a pointer, is not nil).
func written[W, S any](w *W, f specRow[W, S]) bool {
	v := reflect.ValueOf(w).Elem().FieldByName(f.JSON)
	return v.IsValid() && !v.IsNil()
}

// amountField is the row of a count-or-percentage field (structs.Amount),
// held by pointer in the strategy: nil when no block writes it.
func amountField[W, S any](hcl, json string, in func(*W) **structs.Amount, out func(*S) **structs.Amount) specRow[W, S] {
	return specRow[W, S]{
		HCL:  hcl,
		JSON: json,
		decode: func(d *decoder, a *hclsyntax.Attribute, path, field string, w *W) {
			*in(w) = d.amount(a, path, field)
		},
		lay: func(s *S, w *W) {
			if v := *in(w); v != nil {
				c := *v
				*out(s) = &c
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
func updateGrammar() []element { return rowsGrammar(updateSpec) }

// rowsGrammar is the grammar table's part for a block's rows.
func rowsGrammar[W, S any](rows []specRow[W, S]) []element {
	out := make([]element, 0, len(rows))
	for _, f := range rows {
		out = append(out, element{HCL: f.HCL, JSON: f.JSON, Kind: f.Kind, Support: supported})
	}
	return out
}

// update decodes an update block of a job file.
func (d *decoder) update(b *hclsyntax.Block, path string) *specUpdate {
	d.lc.set(path, d.at(b.TypeRange, "update"))
	u := &specUpdate{}
	decodeRows(d, b.Body, "update", path, "update", updateSpec, u)
	return u
}

// decodeRows decodes the fields of a block's body (blockName in the
// grammar table) into w, each under path.JSON and named field.hcl.
func decodeRows[W, S any](d *decoder, body *hclsyntax.Body, blockName, path, field string, rows []specRow[W, S], w *W) {
	attrs, blocks := d.content(body, blockName)
	for _, f := range rows {
		if f.decodeBlocks != nil {
			f.decodeBlocks(d, blocks[f.HCL], path+"."+f.JSON, field+"."+f.HCL, w)
			continue
		}
		if f.Kind == block {
			var b *hclsyntax.Block
			if bs := blocks[f.HCL]; len(bs) > 0 {
				b = bs[0]
			}
			f.decodeBlock(d, b, path+"."+f.JSON, field+"."+f.HCL, w)
			continue
		}
		f.decode(d, attrs[f.HCL], path+"."+f.JSON, field+"."+f.HCL, w)
	}
}

// layUpdate copies the fields a block sets over u; over a group's
// strategy (group), the fields of the job-level block alone are left out.
func layUpdate(u *structs.UpdateStrategy, a *specUpdate, group bool) {
	if a == nil {
		return
	}
	for _, f := range updateSpec {
		if !(group && f.JobOnly) {
			f.lay(u, a)
		}
	}
}

// jobUpdate is the job-level block, defaulted and checked; nil when the
// job has none. A batch or sysbatch job may not have one: it has no
// deployments (Nomad: "Job type does not allow update block").
func (b *builder) jobUpdate(jobType string, ju *specUpdate) *structs.UpdateStrategy {
	if ju == nil {
		return nil
	}
	if structs.RunsToCompletion(jobType) {
		b.err("Job.Update", "is not allowed for %s jobs", jobType)
		return nil
	}
	u := structs.DefaultUpdateStrategy()
	layUpdate(u, ju, false)
	b.staggerSet(u, ju)
	b.checkWrittenAnalyses("Job.Update", ju)
	b.checkUpdate("", jobType, "Job.Update", u, 0, nil)
	return u
}

// groupUpdate merges a group's strategy: the defaults, the job-level block
// ju over them, then the fields the group's own block gu sets — the
// fields of the job-level block alone (JobOnly) aside, which gu may not
// write. Batch and sysbatch groups have none. Each error names the block the offending
// value came from.
func (b *builder) groupUpdate(path string, jobType string, tg *structs.TaskGroup, ju, gu *specUpdate) *structs.UpdateStrategy {
	if structs.RunsToCompletion(jobType) {
		if gu != nil {
			b.err(path+".Update", "is not allowed for %s jobs", jobType)
		}
		return nil
	}
	u := structs.DefaultUpdateStrategy()
	src := map[string]string{}
	if ju != nil {
		layUpdate(u, ju, true)
		for _, f := range updateSpec {
			src[f.JSON] = "Job.Update." + f.JSON
		}
	}
	if gu != nil {
		layUpdate(u, gu, true)
		for _, f := range updateSpec {
			if f.JobOnly && written(gu, f) {
				b.err(path+".Update."+f.JSON, "is allowed in the job-level update block only (the job's groups roll one at a time in its order)")
			}
		}
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
	b.zoneSources(src, path, ju, gu)
	b.checkWrittenAnalyses(path+".Update", gu)
	b.analysisSources(src, path, u.Analyses, ju, gu)
	b.staggerSet(u, ju, gu)
	b.checkUpdate(tg.Name, jobType, path+".Update", u, tg.Count, src)
	return u
}

// checkUpdate applies the rules of website/rollouts.md part A and C.8 to a merged
// strategy and resolves what the job wrote into what the servers read:
// max_parallel "N%" into MaxParallel for count allocs (ParallelFor; the
// job-level block has no count and gets 1, as a percentage is at least one
// alloc, and so does a system group, whose share is of its nodes), and
// on_failure, once checked as written, into FailureAction. An
// empty checkpoint list stays empty, not nil: in API JSON, [] clears the
// job-level list where null would inherit it. src maps each field to the
// path it came from (nil: updPath.Field); count > 0 enables the checks
// that need the group's count.
func (b *builder) checkUpdate(group, jobType, updPath string, u *structs.UpdateStrategy, count int, src map[string]string) {
	at := func(f string) string {
		if p, ok := src[f]; ok {
			return p
		}
		return updPath + "." + f
	}
	// A system group's shares are of the nodes it runs on, which only the
	// scheduler knows: its policies are checked as for no count.
	pcount := count
	if jobType == structs.JobTypeSystem {
		pcount = 0
	}
	if p := u.MaxParallelPercent; p != nil && *p >= 0 && *p <= 100 {
		u.MaxParallel = u.ParallelFor(pcount)
	}
	defer func() { u.OnFailure = u.FailureAction() }()
	b.checkPolicies(group, jobType, u, pcount, at)
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

// checkPolicies applies the rules of website/rollouts.md C.8 to drover's rollout
// policies, on the values as written (on_failure not yet resolved).
func (b *builder) checkPolicies(group, jobType string, u *structs.UpdateStrategy, count int, at func(string) string) {
	if p := u.MaxParallelPercent; p != nil && (*p < 0 || *p > 100) {
		b.err(at("MaxParallelPercent"), "must be a percentage from 0%% to 100%% (got %d%%)", *p)
	}
	for _, f := range []struct {
		name string
		a    *structs.Amount
	}{{"MaxSurge", u.MaxSurge}, {"FirstBatch", u.FirstBatch}, {"MaxUnhealthy", u.MaxUnhealthy}, {"MaxFailed", u.MaxFailed}} {
		if f.a != nil {
			b.checkAmount(at(f.name), *f.a)
		}
	}
	if jobType == structs.JobTypeSystem && u.MaxSurge != nil && u.MaxSurge.Value > 0 {
		b.err(at("MaxSurge"), "is not supported for system jobs: a system job runs one allocation per node")
	}
	if jobType == structs.JobTypeSystem && u.Zones != nil {
		b.err(at("Zones"), "is not supported for system jobs by drover: a system job's rollout goes node by node, not zone by zone")
	}
	if u.FirstBatch != nil && u.Canary > 0 {
		b.err(at("FirstBatch"), "cannot be set together with canary (a canary is already a first batch)")
	}
	switch u.OnFailure {
	case "", structs.OnFailureRevert:
	case structs.OnFailureFail, structs.OnFailurePause:
		if u.AutoRevert {
			b.err(at("OnFailure"), "must be revert or left unset when auto_revert = true (got %q)", u.OnFailure)
		}
	default:
		b.err(at("OnFailure"), "must be fail, pause or revert (got %q)", u.OnFailure)
	}
	b.checkCheckpoints(group, u, count, at("Checkpoints"))
	b.checkZones(u.Zones, at)
	b.checkAnalyses(u, at)
	switch {
	case u.CheckpointDelay < 0:
		b.err(at("CheckpointDelay"), "must not be negative (got %s)", u.CheckpointDelay)
	case u.CheckpointDelay > 0 && len(u.Checkpoints) == 0:
		b.err(at("CheckpointDelay"), "needs checkpoints (it is how long a rollout waits at each)")
	}
	if u.FirstBatch != nil && u.FirstBatch.ValidPercent() && u.FirstBatch.Value >= 0 && u.MaxParallel > 0 &&
		(u.MaxParallelPercent == nil || *u.MaxParallelPercent >= 0 && *u.MaxParallelPercent <= 100) {
		switch {
		case !u.FirstBatch.Percent && u.MaxParallelPercent == nil:
			// Both counts: the same for every group, so a job-level value
			// is warned about once.
			if u.FirstBatch.Value > u.MaxParallel {
				b.warn(at("FirstBatch"), "is greater than max_parallel (%d > %d): the first batch is capped at max_parallel", u.FirstBatch.Value, u.MaxParallel)
			}
		case count > 0:
			if fb, par := max(1, u.FirstBatch.Of(count, true)), u.ParallelFor(count); fb > par {
				b.warn(at("FirstBatch"), "is greater than max_parallel for group %q of count %d (%s is %d, max_parallel %d): the first batch is capped at max_parallel",
					group, count, u.FirstBatch, fb, par)
			}
		}
	}
}

// checkAmount checks a count-or-percentage field: a count not negative, a
// percentage within 0–100.
func (b *builder) checkAmount(path string, a structs.Amount) bool {
	switch {
	case !a.ValidPercent():
		b.err(path, "must be a percentage from 0%% to 100%% (got %s)", a)
	case !a.Percent && a.Value < 0:
		b.err(path, "must not be negative (got %d)", a.Value)
	default:
		return true
	}
	return false
}

// checkCheckpoints checks the checkpoints at path: each a percentage
// within 0–100 or a count from 1 to the group's count, strictly
// increasing — as written when all are of one kind, else as resolved for
// the group's count.
func (b *builder) checkCheckpoints(group string, u *structs.UpdateStrategy, count int, path string) {
	cps := u.Checkpoints
	valid := true
	kinds := map[bool]bool{}
	for i, c := range cps {
		p := fmt.Sprintf("%s[%d]", path, i)
		kinds[c.Percent] = true
		switch {
		case !b.checkAmount(p, c):
			valid = false
		case !c.Percent && c.Value < 1:
			b.err(p, "must be at least 1 (got %d)", c.Value)
			valid = false
		case !c.Percent && count > 0 && c.Value > count:
			b.err(p, "is more than the count of group %q (%d > %d)", group, c.Value, count)
			valid = false
		}
	}
	if !valid {
		return
	}
	if len(kinds) == 1 {
		for i := 1; i < len(cps); i++ {
			if cps[i].Value <= cps[i-1].Value {
				b.err(fmt.Sprintf("%s[%d]", path, i), "must be strictly increasing (got %s after %s)", cps[i], cps[i-1])
			}
		}
		return
	}
	if count <= 0 {
		return // counts and percentages compare only for a group's count
	}
	res := u.CheckpointsFor(count)
	show := func(i int) string {
		if cps[i].Percent {
			return fmt.Sprintf("%s = %d", cps[i], res[i])
		}
		return cps[i].String()
	}
	for i := 1; i < len(res); i++ {
		if res[i] <= res[i-1] {
			b.err(fmt.Sprintf("%s[%d]", path, i), "must be strictly increasing for group %q of count %d (got %s after %s)",
				group, count, show(i), show(i-1))
		}
	}
}
