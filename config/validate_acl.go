package config

import "time"

// maxACLTTL is the longest acl.token_ttl or policy_ttl that passes
// without a warning: longer, a revoked token keeps working on a client's
// own endpoints for longer than an operator expects.
const maxACLTTL = time.Minute

// acl checks the acl and limits blocks.
func (v *validator) acl() {
	a, l := v.c.ACL, v.c.Limits
	for _, d := range []struct {
		path string
		d    time.Duration
	}{{"acl.token_ttl", a.TokenTTL}, {"acl.policy_ttl", a.PolicyTTL}} {
		switch {
		case d.d < 0:
			v.errorf(d.path, "%s must not be negative (got %s)", d.path, d.d)
		case d.d > maxACLTTL:
			v.warnf(d.path, "%s is %s: a revoked token or a changed policy keeps its effect on a client's logs and stats endpoints that long", d.path, d.d)
		}
	}
	several := v.c.Server.BootstrapExpect > 1 || len(v.c.Server.RetryJoin) > 0
	if a.Enabled && v.c.Server.Enabled && several && !v.c.Dev && v.c.Server.JoinToken == "" {
		v.warnf("acl.enabled", "acl.enabled without server.join_token: the servers cannot prove to each other that autopilot's health probes (/v1/agent/self) come from a server, so autopilot sees the other servers as unhealthy; set server.join_token")
	}
	for _, p := range []string{"acl.token_ttl", "acl.policy_ttl"} {
		if !a.Enabled && v.c.IsSet(p) {
			v.warnf(p, "%s is ignored: acl.enabled is off", p)
		}
	}
	if l.HTTPWriteRate < 0 {
		v.errorf("limits.http_write_rate", "limits.http_write_rate must not be negative (got %d); 0 turns the limit off", l.HTTPWriteRate)
	}
	if l.HTTPWriteBurst < 0 || l.HTTPWriteRate > 0 && l.HTTPWriteBurst < 1 {
		v.errorf("limits.http_write_burst", "limits.http_write_burst must be at least 1 while limits.http_write_rate is on (got %d)", l.HTTPWriteBurst)
	}
}
