// Package jobdiff compares two versions of a job field by field, in the
// shape of Nomad's JobDiff: the job's own fields, its objects (update,
// constraints, …), each task group with its fields, objects and tasks, and
// each task with its fields and objects (config, resources, services, …).
//
// One function, Jobs, serves every place that shows a change: the plan
// endpoint (`Diff: true`), the versions endpoint (`?diffs=true`), `job plan`
// and `job history -p`. Annotations say what a change forces, with Nomad's
// words: a task that is added "forces create", removed "forces destroy",
// changed destructively "forces create/destroy update" and otherwise "forces
// in-place update"; a count that grows "forces create", that shrinks "forces
// destroy".
//
// The comparison walks the structs by reflection, so a field added to a job
// block is compared without a change here. Values are written as Nomad's
// flattened form writes them: durations in nanoseconds, booleans as
// true/false, maps as Name[key], list items as Name[i].
package jobdiff

import (
	"sort"

	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/structs"
)

// Diff types, as Nomad's.
const (
	TypeNone    = "None"
	TypeAdded   = "Added"
	TypeDeleted = "Deleted"
	TypeEdited  = "Edited"
)

// Annotations, as Nomad's.
const (
	AnnotationForcesCreate            = "forces create"
	AnnotationForcesDestroy           = "forces destroy"
	AnnotationForcesInplaceUpdate     = "forces in-place update"
	AnnotationForcesDestructiveUpdate = "forces create/destroy update"
)

// JobDiff is what changed in a job.
type JobDiff struct {
	Type       string
	ID         string
	Fields     []*FieldDiff
	Objects    []*ObjectDiff
	TaskGroups []*TaskGroupDiff
}

// TaskGroupDiff is what changed in a group. Updates, filled by a plan, counts
// what the scheduler would do to its allocations ("create", "ignore", …).
type TaskGroupDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
	Tasks   []*TaskDiff
	Updates map[string]uint64
}

// TaskDiff is what changed in a task, with what the change forces.
type TaskDiff struct {
	Type        string
	Name        string
	Fields      []*FieldDiff
	Objects     []*ObjectDiff
	Annotations []string
}

// FieldDiff is one value's change. Old is empty for an added value, New for
// a deleted one.
type FieldDiff struct {
	Type        string
	Name        string
	Old, New    string
	Annotations []string
}

// ObjectDiff is a nested block's change.
type ObjectDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
}

// Fields each level leaves out: identity, server-set state, and the levels
// below, which have diffs of their own.
var (
	jobSkip = map[string]bool{
		"ID": true, "Status": true, "StatusDescription": true, "Version": true, "Stable": true,
		"SubmitTime": true, "CreateIndex": true, "ModifyIndex": true, "JobModifyIndex": true,
		"TaskGroups": true, "RevertOf": true, "Payload": true, "DispatchIdempotencyToken": true,
	}
	groupSkip = map[string]bool{"Name": true, "Tasks": true}
	taskSkip  = map[string]bool{"Name": true}
)

// Jobs compares old with job. old may be nil (a new job: everything is
// Added); job may be nil (a purged job: Deleted). With contextual, unchanged
// fields of a changed block are listed too (Type None), so that a reader
// sees them beside what changed; the nomad CLI shows them with -verbose.
func Jobs(old, job *structs.Job, contextual bool) *JobDiff {
	d := &JobDiff{}
	switch {
	case old == nil && job == nil:
		d.Type = TypeNone
		return d
	case old == nil:
		d.ID = job.ID
	default:
		d.ID = old.ID
	}
	if job != nil {
		d.ID = job.ID
	}
	old, job = withoutServerSet(old), withoutServerSet(job)
	d.Fields, d.Objects = compare(valueOf(old), valueOf(job), jobSkip, contextual)

	for _, name := range groupNames(old, job) {
		var a, b *structs.TaskGroup
		if old != nil {
			a = old.LookupTaskGroup(name)
		}
		if job != nil {
			b = job.LookupTaskGroup(name)
		}
		if g := groups(old, job, a, b, contextual); g != nil {
			d.TaskGroups = append(d.TaskGroups, g)
		}
	}
	d.Type = levelType(old == nil, job == nil, d.Fields, d.Objects, func() bool {
		for _, g := range d.TaskGroups {
			if g.Type != TypeNone {
				return true
			}
		}
		return false
	})
	return d
}

// withoutServerSet returns j, or a copy of it without what the servers
// set in its groups' scaling policies (ID, namespace, target, indexes),
// which a submitted job lacks and a stored one has.
func withoutServerSet(j *structs.Job) *structs.Job {
	if j == nil || len(j.ScalingPolicies()) == 0 {
		return j
	}
	c := j.Copy()
	for _, p := range c.ScalingPolicies() {
		p.ID, p.Namespace, p.Target, p.CreateIndex, p.ModifyIndex = "", "", nil, 0, 0
	}
	return c
}

// groups compares one group of two job versions.
func groups(oldJob, job *structs.Job, a, b *structs.TaskGroup, contextual bool) *TaskGroupDiff {
	g := &TaskGroupDiff{}
	if a != nil {
		g.Name = a.Name
	} else {
		g.Name = b.Name
	}
	g.Fields, g.Objects = compare(valueOf(a), valueOf(b), groupSkip, contextual)
	if a != nil && b != nil {
		annotateCount(g.Fields, a.Count, b.Count)
	}
	// A group-level change that replaces allocations (a network, a
	// service, a constraint) replaces every task with it.
	groupDestructive := a != nil && b != nil && oldJob != nil && job != nil &&
		scheduler.UpdateKindFor(versioned(oldJob, 0), versioned(job, 1), g.Name) == scheduler.UpdateDestructive

	for _, name := range taskNames(a, b) {
		var ta, tb *structs.Task
		ta, tb = a.LookupTask(name), b.LookupTask(name)
		t := tasks(ta, tb, groupDestructive, contextual)
		if t.Type != TypeNone || contextual {
			g.Tasks = append(g.Tasks, t)
		}
	}
	g.Type = levelType(a == nil, b == nil, g.Fields, g.Objects, func() bool {
		for _, t := range g.Tasks {
			if t.Type != TypeNone {
				return true
			}
		}
		return false
	})
	return g
}

// versioned returns a shallow copy of j with the given version, so that
// UpdateKindFor compares the specs rather than finding the same version.
func versioned(j *structs.Job, v uint64) *structs.Job {
	c := *j
	c.Version, c.CreateIndex = v, 0
	return &c
}

// tasks compares one task of two group versions and annotates it.
func tasks(a, b *structs.Task, groupDestructive, contextual bool) *TaskDiff {
	t := &TaskDiff{}
	if a != nil {
		t.Name = a.Name
	} else {
		t.Name = b.Name
	}
	t.Fields, t.Objects = compare(valueOf(a), valueOf(b), taskSkip, contextual)
	t.Type = levelType(a == nil, b == nil, t.Fields, t.Objects, nil)
	switch {
	case t.Type == TypeAdded:
		t.Annotations = []string{AnnotationForcesCreate}
	case t.Type == TypeDeleted:
		t.Annotations = []string{AnnotationForcesDestroy}
	case t.Type == TypeEdited && (groupDestructive || scheduler.TaskDestructive(a, b)):
		t.Annotations = []string{AnnotationForcesDestructiveUpdate}
	case t.Type == TypeEdited:
		t.Annotations = []string{AnnotationForcesInplaceUpdate}
	}
	return t
}

// annotateCount marks a changed Count with what it forces.
func annotateCount(fields []*FieldDiff, old, cur int) {
	for _, f := range fields {
		if f.Name != "Count" || f.Type != TypeEdited {
			continue
		}
		if cur > old {
			f.Annotations = []string{AnnotationForcesCreate}
		} else {
			f.Annotations = []string{AnnotationForcesDestroy}
		}
	}
}

// levelType is a level's type: Added or Deleted when one side is missing,
// Edited when a field, an object or (more) a level below changed.
func levelType(oldMissing, newMissing bool, fields []*FieldDiff, objects []*ObjectDiff, more func() bool) string {
	switch {
	case oldMissing && newMissing:
		return TypeNone
	case oldMissing:
		return TypeAdded
	case newMissing:
		return TypeDeleted
	}
	for _, f := range fields {
		if f.Type != TypeNone {
			return TypeEdited
		}
	}
	for _, o := range objects {
		if o.Type != TypeNone {
			return TypeEdited
		}
	}
	if more != nil && more() {
		return TypeEdited
	}
	return TypeNone
}

func groupNames(a, b *structs.Job) []string {
	seen := map[string]bool{}
	var out []string
	for _, j := range []*structs.Job{a, b} {
		if j == nil {
			continue
		}
		for _, g := range j.TaskGroups {
			if !seen[g.Name] {
				seen[g.Name] = true
				out = append(out, g.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func taskNames(a, b *structs.TaskGroup) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range []*structs.TaskGroup{a, b} {
		if g == nil {
			continue
		}
		for _, t := range g.Tasks {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, t.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}
