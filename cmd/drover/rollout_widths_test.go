package main

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestRolloutWidths(t *testing.T) {
	pct := 25
	u := structs.DefaultUpdateStrategy()
	u.MaxParallelPercent = &pct
	u.MaxSurge = structs.Percent(10)
	u.FirstBatch = structs.Count(1)
	u.MaxFailed = structs.Percent(20)
	u.MaxUnhealthy = structs.Count(2)
	u.OnFailure = structs.OnFailurePause
	u.Checkpoints = []structs.Amount{*structs.Percent(10), *structs.Count(5)}
	u.CheckpointDelay = 10 * time.Minute
	tg := &structs.TaskGroup{Name: "web", Count: 10, Update: u}
	want := `Rollout of "web" (count 10): max_parallel 2 (25%), max_surge 1 (10%), first_batch 1, max_unhealthy 2, ` +
		`max_failed 2 (20%), checkpoints at 1 (10%), 5 healthy, resumed after 10m0s, on_failure pause`
	if got := rolloutWidths(tg, structs.JobTypeService); got != want {
		t.Errorf("rolloutWidths:\n got %s\nwant %s", got, want)
	}
	if got := rolloutWidths(&structs.TaskGroup{Name: "web", Count: 3, Update: structs.DefaultUpdateStrategy()}, structs.JobTypeService); got != "" {
		t.Errorf("a Nomad-only update block prints %q, want nothing", got)
	}
}
