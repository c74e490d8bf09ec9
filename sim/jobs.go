package sim

import (
	"fmt"
	"time"
)

// JobSpec describes a scenario's service job: one group "g" of Count mock
// tasks with tiny resources, constrained to the simulated nodes.
type JobSpec struct {
	ID    string
	Count int
	// MaxParallel 0 leaves the update block out (Nomad's defaults apply).
	MaxParallel    int
	MinHealthyTime time.Duration
	// Version is put in the task's environment; changing it is a
	// destructive update that rolls the job.
	Version string
	// Zones rolls the job zone by zone over the nodes' meta.zone.
	Zones bool
	// MaxSurge, when above 0, starts that many of a batch's replacements
	// beside the allocs they replace.
	MaxSurge int
	// StickyDisk makes the groups' ephemeral disk sticky: a replacement
	// goes back to the node of the alloc it replaces.
	StickyDisk bool
	// Groups, when above 1, splits Count over that many groups (g01,
	// g02, …; the first ones take the remainder) rolled one at a time in
	// that order (group_order); otherwise the job has one group "g".
	Groups int
}

// GroupNames are the job's group names, in rollout order.
func (s JobSpec) GroupNames() []string {
	if s.Groups <= 1 {
		return []string{"g"}
	}
	out := make([]string, s.Groups)
	for i := range out {
		out[i] = fmt.Sprintf("g%02d", i+1)
	}
	return out
}

// GroupCount is the count of the i-th group.
func (s JobSpec) GroupCount(i int) int {
	n := max(s.Groups, 1)
	c := s.Count / n
	if i < s.Count%n {
		c++
	}
	return c
}

// APIJob returns the job as Nomad's API JSON (what PUT /v1/jobs takes).
func (s JobSpec) APIJob() map[string]any {
	var groups []any
	for i, name := range s.GroupNames() {
		groups = append(groups, s.apiGroup(name, s.GroupCount(i)))
	}
	job := map[string]any{
		"ID": s.ID, "Name": s.ID, "Type": "service", "Datacenters": []string{"dc1"},
		"TaskGroups":  groups,
		"Constraints": []any{map[string]any{"LTarget": "${meta." + MetaSim + "}", "RTarget": "true", "Operand": "="}},
	}
	if s.Groups > 1 {
		job["Update"] = map[string]any{"GroupOrder": s.GroupNames()}
	}
	return job
}

// apiGroup is one group of the job.
func (s JobSpec) apiGroup(name string, count int) map[string]any {
	group := map[string]any{
		"Name":          name,
		"Count":         count,
		"EphemeralDisk": map[string]any{"SizeMB": 1, "Sticky": s.StickyDisk},
		"Tasks": []any{map[string]any{
			"Name": "t", "Driver": "mock",
			"Config":    map[string]any{},
			"Env":       map[string]string{"SIM_VERSION": s.Version},
			"Resources": map[string]any{"CPU": 1, "MemoryMB": 10},
		}},
	}
	if s.MaxParallel > 0 {
		mh := s.MinHealthyTime
		if mh <= 0 {
			mh = time.Second
		}
		group["Update"] = map[string]any{
			"MaxParallel":      s.MaxParallel,
			"HealthCheck":      "task_states",
			"MinHealthyTime":   int64(mh),
			"HealthyDeadline":  int64(max(5*time.Minute, 2*mh)),
			"ProgressDeadline": int64(max(10*time.Minute, 4*mh)),
		}
		if s.MaxSurge > 0 {
			group["Update"].(map[string]any)["MaxSurge"] = s.MaxSurge
		}
		if s.Zones {
			group["Update"].(map[string]any)["Zones"] = map[string]any{"Attribute": "${meta.zone}", "Mode": "zone_by_zone"}
		}
	}
	return group
}
