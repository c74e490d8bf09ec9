package httpapi

import (
	"net/http"
	"strings"

	"github.com/droverhq/drover/internal/keyring"
)

// The public keys that verify workload identities, for anything outside
// drover (Vault, Consul, a cloud provider, any OIDC verifier), as Nomad
// publishes them; public, served by every server from its copy of the
// replicated keyring:
//
//	GET /.well-known/jwks.json            → {"keys": [JWK]}: the RSA public key of every root
//	                                         key (active and inactive), "kid" the key's ID
//	GET /.well-known/openid-configuration → the OIDC discovery document: issuer (the agent's
//	                                         HTTP address), jwks_uri, RS256

func init() {
	register(
		route{"GET /.well-known/jwks.json", localRoute, public, (*Server).jwks},
		route{"GET /.well-known/openid-configuration", localRoute, public, (*Server).oidcDiscovery},
	)
}

func (s *Server) jwks(w http.ResponseWriter, _ *http.Request) (any, error) {
	keys, err := s.backend.State().Snapshot().RootKeys()
	if err != nil {
		return nil, err
	}
	set, err := keyring.PublicKeys(keys)
	if err != nil {
		return nil, err
	}
	// Nomad's minimum: a verifier refetches on an unknown "kid" anyway.
	w.Header().Set("Cache-Control", "max-age=900")
	return set, nil
}

// oidcDiscoveryDoc is the OIDC discovery document (OpenID Connect
// Discovery 1.0), the fields Nomad answers.
type oidcDiscoveryDoc struct {
	Issuer                string   `json:"issuer"`
	JWKSURI               string   `json:"jwks_uri"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	RequestParameter      bool     `json:"request_parameter_supported"`
	RequestURIParameter   bool     `json:"request_uri_parameter_supported"`
	IDTokenAlgs           []string `json:"id_token_signing_alg_values_supported"`
	ResponseTypes         []string `json:"response_types_supported"`
	Subjects              []string `json:"subject_types_supported"`
}

func (s *Server) oidcDiscovery(_ http.ResponseWriter, r *http.Request) (any, error) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if self := s.backend.Self(); self != nil && self.Config.Addresses.HTTP != "" && !strings.HasPrefix(self.Config.Addresses.HTTP, "0.0.0.0:") && !strings.HasPrefix(self.Config.Addresses.HTTP, "[::]:") {
		host = self.Config.Addresses.HTTP
	}
	issuer := scheme + "://" + host
	return oidcDiscoveryDoc{
		Issuer:                issuer,
		JWKSURI:               issuer + "/.well-known/jwks.json",
		AuthorizationEndpoint: "openid:",
		IDTokenAlgs:           []string{"RS256"},
		ResponseTypes:         []string{"code"},
		Subjects:              []string{"public"},
	}, nil
}
