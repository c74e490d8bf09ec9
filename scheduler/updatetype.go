package scheduler

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/droverhq/drover/structs"
)

// UpdateKind says how an allocation moves to a new job version.
type UpdateKind int

const (
	// UpdateNone: the group is unchanged and the version is the same.
	UpdateNone UpdateKind = iota
	// UpdateInPlace: the alloc keeps running; only its job is swapped.
	UpdateInPlace
	// UpdateDestructive: the alloc is replaced by a new one.
	UpdateDestructive
	// UpdateRestart: a job restart in place has yet to reach the alloc
	// (restart.go); it counts against the batch as a replacement does.
	UpdateRestart
)

func (k UpdateKind) String() string {
	switch k {
	case UpdateInPlace:
		return "in-place"
	case UpdateDestructive:
		return "destructive"
	case UpdateRestart:
		return "restart"
	}
	return "none"
}

// UpdateKindFor decides how an allocation of group running oldJob moves to
// newJob.
//
// Destructive: a change of task set, driver, user, config, env, resources,
// services and checks, networks, ephemeral disk, log config, constraints,
// affinities, spreads, datacenters or node pool. Placement rules are treated as
// destructive for simplicity: a changed constraint may no longer hold on the
// alloc's node, and re-checking every node here would make the reconciler
// depend on node state.
//
// In place: changes only to meta (job, group or task), the update strategy,
// restart, reschedule and kill settings, shutdown delay, count and priority.
// A task keeps the meta values it started with until it restarts.
//
// The same version (and create index) is UpdateNone. A missing old job or
// group is destructive.
func UpdateKindFor(oldJob, newJob *structs.Job, group string) UpdateKind {
	if oldJob == nil || newJob == nil {
		return UpdateDestructive
	}
	if oldJob.Version == newJob.Version && oldJob.CreateIndex == newJob.CreateIndex {
		return UpdateNone
	}
	a, b := oldJob.LookupTaskGroup(group), newJob.LookupTaskGroup(group)
	if a == nil || b == nil {
		return UpdateDestructive
	}
	if !equalStrings(oldJob.Datacenters, newJob.Datacenters) || oldJob.NodePool != newJob.NodePool ||
		!equalJSON(oldJob.Constraints, newJob.Constraints) || !equalJSON(oldJob.Spreads, newJob.Spreads) ||
		!equalJSON(oldJob.Affinities, newJob.Affinities) {
		return UpdateDestructive
	}
	if groupDestructive(a, b) {
		return UpdateDestructive
	}
	return UpdateInPlace
}

func groupDestructive(a, b *structs.TaskGroup) bool {
	if !equalJSON(a.Constraints, b.Constraints) || !equalJSON(a.Spreads, b.Spreads) || !equalJSON(a.Affinities, b.Affinities) ||
		!equalJSON(a.Networks, b.Networks) || !equalJSON(a.Services, b.Services) ||
		!reflect.DeepEqual(a.EphemeralDisk, b.EphemeralDisk) || len(a.Tasks) != len(b.Tasks) {
		return true
	}
	for _, at := range a.Tasks {
		bt := b.LookupTask(at.Name)
		if bt == nil || taskDestructive(at, bt) {
			return true
		}
	}
	return false
}

// TaskDestructive reports whether moving a task from a to b replaces its
// allocation (the task-level part of UpdateKindFor); a missing side is
// destructive.
func TaskDestructive(a, b *structs.Task) bool {
	if a == nil || b == nil {
		return true
	}
	return taskDestructive(a, b)
}

func taskDestructive(a, b *structs.Task) bool {
	return a.Driver != b.Driver || a.User != b.User || a.Leader != b.Leader ||
		!equalJSON(a.Config, b.Config) || !equalJSON(a.Env, b.Env) ||
		!equalJSON(a.Resources, b.Resources) || !equalJSON(a.Services, b.Services) ||
		!equalJSON(a.Constraints, b.Constraints) || !equalJSON(a.Affinities, b.Affinities) ||
		!reflect.DeepEqual(a.LogConfig, b.LogConfig) || !equalJSON(a.Templates, b.Templates) || !reflect.DeepEqual(a.Lifecycle, b.Lifecycle) ||
		!equalJSON(a.Artifacts, b.Artifacts)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// equalJSON compares values by their JSON form (so int and float64 config
// numbers compare alike), treating nil and empty as equal.
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	return bytes.Equal(emptyAsNull(ja), emptyAsNull(jb))
}

func emptyAsNull(j []byte) []byte {
	switch string(j) {
	case "[]", "{}":
		return []byte("null")
	}
	return j
}
