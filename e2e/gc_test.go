package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// TestDevAgentCollectsTheOldVersionsAllocs rolls a job out on a dev agent
// whose server keeps finished history one second (eval_gc_threshold): the
// first version's allocations, stopped by the rollout and finished by the
// client, leave the state, with the evaluations that ended; the job and its
// running allocations stay.
func TestDevAgentCollectsTheOldVersionsAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes for tens of seconds")
	}
	cfg := filepath.Join(t.TempDir(), "gc.hcl")
	if err := os.WriteFile(cfg, []byte("server {\n  eval_gc_threshold = \"1s\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDevAgent(t, "-config", cfg)
	c := p.client()

	first := runRollingExample(t, c)
	v1 := parseJob(t, "testdata/rolling.hcl", "version=2")
	registerJob(t, c, v1)
	waitDeploymentStatus(t, c, v1.ID, 1, structs.DeploymentStatusSuccessful)
	eventually(t, 30*time.Second, "the job's allocs to be version 1's four, running", func() error {
		allocs, err := jobAllocs(t, c, v1.ID)
		if err != nil {
			return err
		}
		if len(allocs) != 4 || len(runningAllocs(allocs, 1)) != 4 {
			return fmt.Errorf("allocs: %s", jsonString(allocs))
		}
		return nil
	})
	for _, id := range first {
		var a structs.Allocation
		if _, err := c.Get(ctx(t), "/v1/allocation/"+id, nil, &a); err == nil {
			t.Errorf("version 0's alloc %s is still stored: %s %s", id, a.DesiredStatus, a.ClientStatus)
		}
	}
	// Evaluations that ended go too, within the threshold and a few reaper
	// passes (every 2 s).
	eventually(t, 15*time.Second, "the job's ended evaluations collected", func() error {
		var evals []*structs.Evaluation
		if _, err := c.Get(ctx(t), "/v1/job/"+v1.ID+"/evaluations", nil, &evals); err != nil {
			return err
		}
		for _, e := range evals {
			if e.Terminal() && time.Since(time.Unix(0, e.ModifyTime)) > 5*time.Second {
				return fmt.Errorf("evaluation %s ended %v ago and is still stored", e.ID, time.Since(time.Unix(0, e.ModifyTime)))
			}
		}
		return nil
	})
	job, _, err := c.Jobs().Info(ctx(t), v1.ID, nil)
	if err != nil || job.Status != structs.JobStatusRunning {
		t.Fatalf("job after collection: %+v, %v", job, err)
	}
}
