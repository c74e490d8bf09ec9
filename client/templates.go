package client

import (
	"context"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/client/template"
)

// templateSetup says where tasks' templates read Nomad's API and with
// which token: the configured server, else the one the agent's calls go
// to (a ServerAPI with an Address method, as HTTPServers); the
// configured identity source, else the task's workload identity when the
// servers issue them (a ServerAPI that is an identityIssuer: the agent's
// TaskIdentity), else a ServerAPI's own TaskIdentity (asked as the node,
// with its secret), else none. api is the ServerAPI before nodeAuth
// wraps it.
func templateSetup(cfg Config, api ServerAPI, secret string, agent *Agent) allocrunner.TemplateConfig {
	tc := allocrunner.TemplateConfig{Settings: cfg.Templates, Identity: cfg.TemplateIdentity}
	switch {
	case cfg.TemplateServerAddr != "":
		addr := cfg.TemplateServerAddr
		tc.ServerAddr = func() string { return addr }
	default:
		if a, ok := api.(interface{ Address() string }); ok {
			tc.ServerAddr = a.Address
		}
	}
	if tc.Identity == nil {
		if _, ok := api.(identityIssuer); ok {
			tc.Identity = agent
		} else if ids, ok := api.(template.IdentitySource); ok {
			tc.Identity = nodeIdentity{ids: ids, secret: secret}
		}
	}
	return tc
}

// nodeIdentity asks the servers for tasks' identities as the node.
type nodeIdentity struct {
	ids    template.IdentitySource
	secret string
}

func (n nodeIdentity) TaskIdentity(ctx context.Context, allocID, task string) (string, error) {
	return n.ids.TaskIdentity(apiclient.WithToken(ctx, n.secret), allocID, task)
}
