package config

import "time"

// Nomad's defaults of the server's client_introduction block.
const (
	DefaultClientIntroEnforcement = "warn"
	DefaultClientIntroTTL         = 5 * time.Minute
	DefaultClientIntroMaxTTL      = 30 * time.Minute
)

// Resolved returns the block with Nomad's defaults in place of zero
// values.
func (c ClientIntroduction) Resolved() ClientIntroduction {
	if c.Enforcement == "" {
		c.Enforcement = DefaultClientIntroEnforcement
	}
	if c.DefaultIdentityTTL == 0 {
		c.DefaultIdentityTTL = DefaultClientIntroTTL
	}
	if c.MaxIdentityTTL == 0 {
		c.MaxIdentityTTL = max(DefaultClientIntroMaxTTL, c.DefaultIdentityTTL)
	}
	return c
}

// clientIntroduction checks the server's client_introduction block.
func (v *validator) clientIntroduction() {
	ci := v.c.Server.ClientIntroduction.Resolved()
	const p = "server.client_introduction."
	switch ci.Enforcement {
	case "none", "warn", "strict":
	default:
		v.errorf(p+"enforcement", p+"enforcement must be \"none\", \"warn\" or \"strict\" (got %q)", ci.Enforcement)
	}
	if ci.DefaultIdentityTTL < 0 {
		v.errorf(p+"default_identity_ttl", p+"default_identity_ttl must be greater than 0 (got %s)", ci.DefaultIdentityTTL)
	}
	if ci.MaxIdentityTTL < 0 {
		v.errorf(p+"max_identity_ttl", p+"max_identity_ttl must be greater than 0 (got %s)", ci.MaxIdentityTTL)
	}
	if ci.MaxIdentityTTL < ci.DefaultIdentityTTL {
		v.errorf(p+"max_identity_ttl", p+"max_identity_ttl (%s) must be greater than or equal to default_identity_ttl (%s)", ci.MaxIdentityTTL, ci.DefaultIdentityTTL)
	}
}
