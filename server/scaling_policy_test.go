package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

func scaledJob(id string, count int, minC, maxC int64) *structs.Job {
	j := testJob(id, count, 100)
	j.TaskGroups[0].Scaling = &structs.ScalingPolicy{Type: structs.ScalingPolicyTypeHorizontal, Min: minC, Max: maxC, Enabled: true,
		Policy: map[string]any{"cooldown": "1m"}}
	return j
}

// A group's scaling policy gets its ID and target on the leader when first
// registered, keeps its ID across versions (its ModifyIndex moves only
// when it changes), and bounds job scale.
func TestScalingPolicyRegisterAndScale(t *testing.T) {
	h := newHarness(t)
	h.start()
	if _, err := h.leader.RegisterJob(h.ctx, scaledJob("web", 2, 1, 4)); err != nil {
		t.Fatal(err)
	}
	v0, _ := h.store().Snapshot().JobByID("default", "web")
	p0 := v0.TaskGroups[0].Scaling
	g := v0.TaskGroups[0].Name
	if p0.ID == "" || p0.CreateIndex == 0 || p0.ModifyIndex != p0.CreateIndex || p0.Namespace != "default" ||
		p0.Target["Namespace"] != "default" || p0.Target["Job"] != "web" || p0.Target["Group"] != g {
		t.Fatalf("policy %+v", p0)
	}

	// A new version with the same policy: same ID and indexes.
	j := scaledJob("web", 3, 1, 4)
	if _, err := h.leader.RegisterJob(h.ctx, j); err != nil {
		t.Fatal(err)
	}
	v1, _ := h.store().Snapshot().JobByID("default", "web")
	if p1 := v1.TaskGroups[0].Scaling; v1.Version != 1 || p1.ID != p0.ID || p1.ModifyIndex != p0.ModifyIndex || p1.CreateIndex != p0.CreateIndex {
		t.Fatalf("v%d policy %+v, was %+v", v1.Version, p1, p0)
	}
	// A changed policy: same ID, a new ModifyIndex.
	if _, err := h.leader.RegisterJob(h.ctx, scaledJob("web", 3, 1, 6)); err != nil {
		t.Fatal(err)
	}
	v2, _ := h.store().Snapshot().JobByID("default", "web")
	if p2 := v2.TaskGroups[0].Scaling; p2.ID != p0.ID || p2.CreateIndex != p0.CreateIndex || p2.ModifyIndex <= p0.ModifyIndex || p2.Max != 6 {
		t.Fatalf("changed policy %+v, was %+v", p2, p0)
	}
	// Resubmitting the same job makes no version.
	if r, err := h.leader.RegisterJob(h.ctx, scaledJob("web", 3, 1, 6)); err != nil || r.SpecChanged {
		t.Fatalf("identical resubmission: %+v %v", r, err)
	}

	for _, c := range []struct {
		count int64
		want  string
	}{
		{7, `group count 7 is greater than the scaling policy's maximum 6 (group "` + g + `" scales from 1 to 6)`},
		{0, `group count 0 is less than the scaling policy's minimum 1`},
	} {
		_, err := h.leader.ScaleJob(h.ctx, ScaleRequest{JobID: "web", Group: g, Count: int64p(c.count)})
		if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("scale to %d: %v", c.count, err)
		}
	}
	if _, err := h.leader.ScaleJob(h.ctx, ScaleRequest{JobID: "web", Group: g, Count: int64p(6)}); err != nil {
		t.Fatalf("scale to max: %v", err)
	}
	v3, _ := h.store().Snapshot().JobByID("default", "web")
	if p3 := v3.TaskGroups[0].Scaling; p3.ID != p0.ID || v3.TaskGroups[0].Count != 6 {
		t.Fatalf("after scaling: %+v", p3)
	}
}
