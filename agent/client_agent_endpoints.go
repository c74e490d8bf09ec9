package agent

import (
	"errors"
	"net/http"
	"time"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/httpapi"
)

// A client-only agent forwards the API to its server (client_api.go),
// but its own log and profiles are its own: GET /v1/agent/monitor and
// GET /v1/agent/pprof/ are answered here, so that a server's ?node_id=
// forward (httpapi/agent_target.go) reaches the node's log, not the
// server's. The token is checked as Nomad's client agent checks it:
// agent:read for the log, agent:write for profiles, resolved by the
// servers (cached as the client endpoints' tokens are, acl.go).

// localAgentHandler serves the client-only agent's log and profiles.
func (a *Agent) localAgentHandler() http.Handler {
	cache := &tokenCache{ttl: a.cfg.ACLTokenTTL, now: time.Now}
	authorize := func(r *http.Request, write bool) (bool, error) {
		if !a.cfg.ACLEnabled {
			return false, nil
		}
		secret := httpapi.TokenFromRequest(r)
		granted, err := cache.get(secret, func() (*acl.ACL, *time.Time, error) {
			resp, err := a.client.ResolveACL(r.Context(), secret)
			if err != nil {
				return nil, nil, err
			}
			return resolveRemote(resp)
		})
		switch {
		case errors.Is(err, httpapi.ErrTokenNotFound), errors.Is(err, httpapi.ErrTokenExpired):
			return true, httpapi.Errorf(http.StatusForbidden, "%v", err)
		case err != nil:
			return true, httpapi.Errorf(http.StatusInternalServerError, "checking the ACL token: %v", err)
		case write && !granted.AllowAgentWrite(), !write && !granted.AllowAgentRead():
			return true, httpapi.Errorf(http.StatusForbidden, "%s", httpapi.ErrPermissionDenied)
		}
		return true, nil
	}
	return httpapi.LocalAgentHandler(a, a.logger, authorize)
}
