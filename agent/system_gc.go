package agent

import (
	"context"
	"errors"
	"time"
)

// forceGCPasses bounds the passes of one forced collection: a pass purges
// done jobs, the next deletes their allocations and evaluations, and each
// deletes at most reapBatch of a kind.
const forceGCPasses = 16

// ForceGC is Nomad's forced garbage collection (PUT /v1/system/gc): the
// reaper's passes, made at once on the leader with every age threshold
// taken as zero, until a pass deletes nothing. What a running reaper pass
// deletes meanwhile is skipped here.
func (a *Agent) ForceGC(ctx context.Context) error {
	if a.raft == nil || a.fsm == nil {
		return errors.New("not a server: garbage collection unavailable")
	}
	for range forceGCPasses {
		n, err := reap(ctx, a.raft.Apply, a.fsm.State(), time.Now(), gcThresholds{})
		if err != nil {
			return err
		}
		if !n.empty() {
			a.logger.Info("reaper: forced collection", "allocs", n.Allocs, "evals", n.Evals, "deployments", n.Deployments,
				"jobs", n.Jobs, "nodes", n.Nodes)
		}
		if n.empty() {
			return nil
		}
	}
	return nil
}
