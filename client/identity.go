package client

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/structs"
)

// identityIssuer is a ServerAPI that asks the servers for workload
// identities (HTTPServers).
type identityIssuer interface {
	AllocIdentities(ctx context.Context, allocID string, tasks []string) (*structs.AllocIdentityResponse, error)
}

// AllocIdentities implements identityIssuer for one node: it presents
// the node's secret.
func (n nodeAuth) AllocIdentities(ctx context.Context, allocID string, tasks []string) (*structs.AllocIdentityResponse, error) {
	r, ok := n.api.(identityIssuer)
	if !ok {
		return nil, fmt.Errorf("%w: the servers' API cannot issue workload identities", ErrInvalidConfig)
	}
	return r.AllocIdentities(n.ctx(ctx), allocID, tasks)
}

// TaskIdentity returns the workload identity of one task of one of this
// node's allocations: a JWT signed by the servers that the task's
// requests to them present as X-Nomad-Token (the template engine's
// nomadVar reads do). It lets them read the task's own variables
// (nomad/jobs, nomad/jobs/JOB, nomad/jobs/JOB/GROUP,
// nomad/jobs/JOB/GROUP/TASK, in its namespace) and its namespace's jobs,
// for as long as the allocation is not terminal. Each call asks the
// servers; the answer is not cached.
func (a *Agent) TaskIdentity(ctx context.Context, allocID, task string) (string, error) {
	r, ok := a.api.(identityIssuer)
	if !ok {
		return "", fmt.Errorf("%w: the servers' API cannot issue workload identities", ErrInvalidConfig)
	}
	resp, err := r.AllocIdentities(ctx, allocID, []string{task})
	if err != nil {
		return "", fmt.Errorf("workload identity of task %q of alloc %s: %w", task, allocID, err)
	}
	for _, id := range resp.Identities {
		if id.Task == task {
			return id.JWT, nil
		}
	}
	return "", fmt.Errorf("workload identity of task %q of alloc %s: the servers sent none", task, allocID)
}
