package structs

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ClientIntroTokenHeader carries a client introduction token on a node's
// registration (PUT /v1/internal/node/register), beside the node's
// secret in X-Nomad-Token.
const ClientIntroTokenHeader = "X-Drover-Client-Intro-Token"

// The enforcement levels of client introduction (Nomad's server
// client_introduction.enforcement): "none" admits any node, "warn" admits
// a node without a valid introduction token but logs it, "strict" refuses
// it. A node already registered that presents its own node secret is
// always admitted.
const (
	ClientIntroductionEnforcementNone   = "none"
	ClientIntroductionEnforcementWarn   = "warn"
	ClientIntroductionEnforcementStrict = "strict"
)

// ClientIntroductionConfig is the servers' client_introduction block.
type ClientIntroductionConfig struct {
	Enforcement string
	// DefaultIdentityTTL is the TTL of an introduction token whose request
	// names none; MaxIdentityTTL caps what a request may ask for.
	DefaultIdentityTTL time.Duration
	MaxIdentityTTL     time.Duration
}

// DefaultClientIntroductionConfig returns Nomad's defaults: warn, 5m, 30m.
func DefaultClientIntroductionConfig() ClientIntroductionConfig {
	return ClientIntroductionConfig{
		Enforcement:        ClientIntroductionEnforcementWarn,
		DefaultIdentityTTL: 5 * time.Minute,
		MaxIdentityTTL:     30 * time.Minute,
	}
}

// Validate checks the block, naming the field at fault.
func (c ClientIntroductionConfig) Validate() error {
	var errs []error
	switch c.Enforcement {
	case ClientIntroductionEnforcementNone, ClientIntroductionEnforcementWarn, ClientIntroductionEnforcementStrict:
	default:
		errs = append(errs, fmt.Errorf("enforcement: invalid enforcement %q (none, warn or strict)", c.Enforcement))
	}
	if c.DefaultIdentityTTL <= 0 {
		errs = append(errs, errors.New("default_identity_ttl must be greater than 0"))
	}
	if c.MaxIdentityTTL <= 0 {
		errs = append(errs, errors.New("max_identity_ttl must be greater than 0"))
	}
	if c.MaxIdentityTTL < c.DefaultIdentityTTL {
		errs = append(errs, errors.New("max_identity_ttl must be greater than or equal to default_identity_ttl"))
	}
	return errors.Join(errs...)
}

// IdentityTTL is the TTL of an introduction token asked for with
// requested: the default when 0, at most the maximum (capped reports a
// request over it, which Nomad answers with the maximum).
func (c ClientIntroductionConfig) IdentityTTL(requested time.Duration) (ttl time.Duration, capped bool) {
	switch {
	case requested == 0:
		return c.DefaultIdentityTTL, false
	case requested > c.MaxIdentityTTL:
		return c.MaxIdentityTTL, true
	}
	return requested, false
}

// ClientIntroductionTokenRequest is the body of PUT
// /v1/acl/identity/client-introduction-token (Nomad's
// ACLIdentityClientIntroductionTokenRequest): all optional.
type ClientIntroductionTokenRequest struct {
	// TTL: nanoseconds, or a duration string ("10m").
	TTL      time.Duration
	NodeName string
	NodePool string
}

// UnmarshalJSON accepts the TTL as nanoseconds or as a duration string,
// as Nomad's.
func (r *ClientIntroductionTokenRequest) UnmarshalJSON(data []byte) error {
	type alias ClientIntroductionTokenRequest
	aux := struct {
		TTL any
		*alias
	}{alias: (*alias)(r)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	switch v := aux.TTL.(type) {
	case nil:
	case string:
		if v == "" {
			break
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("TTL: %w", err)
		}
		r.TTL = d
	case float64:
		r.TTL = time.Duration(v)
	default:
		return fmt.Errorf("TTL: want a duration, got %T", v)
	}
	return nil
}

// ClientIntroductionTokenResponse answers it.
type ClientIntroductionTokenResponse struct {
	JWT string
}

// NodeIdentityResponse answers PUT /v1/internal/node/{id}/identity: the
// node's new identity.
type NodeIdentityResponse struct {
	JWT string
}

// NodeIdentityGetResponse answers GET /v1/client/identity: the claims of
// the node's identity (Nomad's shape).
type NodeIdentityGetResponse struct {
	Claims map[string]any
}

// NodeIdentityRenewRequest is the (optional) body of PUT
// /v1/client/identity/renew.
type NodeIdentityRenewRequest struct {
	NodeID string
}

// NodeIdentityRenewResponse answers it (empty, as Nomad's).
type NodeIdentityRenewResponse struct{}
