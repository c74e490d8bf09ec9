package agent

import (
	"context"
	"fmt"
	"net/url"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/structs"
)

// regionDeployments reads another region's deployments of a job from one
// of its servers (server.RegionReader), with the replication token when
// one is set (with ACLs, the token the other regions accept). The read is
// bounded by its context (server.MultiregionWatcher.ReadTimeout).
type regionDeployments struct{ a *Agent }

func (r regionDeployments) JobDeployments(ctx context.Context, region, namespace, jobID string) ([]*structs.Deployment, error) {
	addr, err := r.a.regionServer(region)
	if err != nil {
		return nil, err
	}
	c, err := r.a.federationClient(addr, region)
	if err != nil {
		return nil, err
	}
	if r.a.cfg.ReplicationToken != "" {
		c.SetToken(r.a.cfg.ReplicationToken)
	}
	var out []*structs.Deployment
	_, err = c.Get(ctx, "/v1/job/"+url.PathEscape(jobID)+"/deployments",
		&apiclient.QueryOptions{Namespace: namespace, Params: map[string]string{"region": region, "all": "true"}}, &out)
	if err != nil {
		return nil, fmt.Errorf("reading region %q's deployments of job %q from %s: %w", region, jobID, addr, err)
	}
	return out, nil
}

// startMultiregionWatch runs the regions' rollout of multi-region jobs on
// this server's leadership terms.
func (a *Agent) startMultiregionWatch() {
	w := &server.MultiregionWatcher{Region: a.cfg.Region, Reader: regionDeployments{a}, Raft: a.raft, State: a.fsm.State,
		Logger: a.logger.Named("multiregion"), MinBuild: a.MinServerBuild}
	a.raft.OnLeadership("multiregion", w.Run)
}

// UnblockDeployment ends a blocked multi-region deployment by hand
// (httpapi.DeploymentUnblockBackend).
func (a *Agent) UnblockDeployment(ctx context.Context, id string) (*structs.DeploymentUpdateResponse, error) {
	return a.leader.UnblockDeployment(ctx, id)
}
