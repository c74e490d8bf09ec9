package acl

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	bexpr "github.com/hashicorp/go-bexpr"

	"github.com/droverhq/drover/structs"
)

// A login with an auth method (PUT /v1/acl/login), as Nomad's, in three
// pure steps the HTTP API strings together: VerifyJWT checks a JWT
// against the method's configuration and returns its claims; MapClaims
// turns the claims into the values binding rules and token names see
// (value.<name>, list.<name>); Bind evaluates the method's binding rules
// over them and says which roles and policies (or management) the token
// it makes gets. Time is an input; nothing here fetches keys.

// Sentinel errors of a login.
var (
	// ErrLoginToken: the JWT does not verify (signature, algorithm,
	// audience, issuer, times).
	ErrLoginToken = errors.New("failed to verify login token")
	// ErrClaims: a mapped claim is missing or of the wrong type.
	ErrClaims = errors.New("failed to map claims")
	// ErrNoBindings: no binding rule matched (Nomad's words).
	ErrNoBindings = errors.New("no role or policy bindings matched")
)

// Nomad's default leeways of a JWT's times.
const (
	DefaultExpirationLeeway = 150 * time.Second
	DefaultNotBeforeLeeway  = 150 * time.Second
	DefaultClockSkewLeeway  = 60 * time.Second
)

// SupportedSigningAlgs are the JWT algorithms a method may name; RS256
// when it names none.
var SupportedSigningAlgs = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "EdDSA"}

// ParsePublicKeys parses PEM public keys (PKIX "PUBLIC KEY", PKCS#1 "RSA
// PUBLIC KEY", or certificates), naming the one that does not parse.
func ParsePublicKeys(pems []string) ([]crypto.PublicKey, error) {
	var out []crypto.PublicKey
	for i, p := range pems {
		block, _ := pem.Decode([]byte(strings.TrimSpace(p)))
		if block == nil {
			return nil, fmt.Errorf("JWTValidationPubKeys[%d]: not a PEM block", i)
		}
		var key any
		var err error
		switch block.Type {
		case "CERTIFICATE":
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
				key = cert.PublicKey
			}
		case "RSA PUBLIC KEY":
			key, err = x509.ParsePKCS1PublicKey(block.Bytes)
		default:
			key, err = x509.ParsePKIXPublicKey(block.Bytes)
		}
		if err != nil {
			return nil, fmt.Errorf("JWTValidationPubKeys[%d]: %w", i, err)
		}
		switch key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			return nil, fmt.Errorf("JWTValidationPubKeys[%d]: unsupported key type %T", i, key)
		}
		out = append(out, key)
	}
	return out, nil
}

func leeway(d, def time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d == 0:
		return def
	}
	return d
}

// VerifyJWT checks token's signature against keys (any of them) with one
// of the method's SigningAlgs, and its claims against the method's bound
// audiences and issuers and, with the leeways, its times at now; it
// returns the claims.
func VerifyJWT(token string, keys []crypto.PublicKey, c *structs.ACLAuthMethodConfig, now time.Time) (map[string]any, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: the auth method has no configuration", ErrLoginToken)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no keys to verify it with", ErrLoginToken)
	}
	algs := c.SigningAlgs
	if len(algs) == 0 {
		algs = []string{"RS256"}
	}
	var claims jwt.MapClaims
	var lastErr error
	for _, k := range keys {
		claims = jwt.MapClaims{}
		_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return k, nil },
			jwt.WithValidMethods(algs), jwt.WithoutClaimsValidation())
		if err == nil {
			lastErr = nil
			break
		}
		lastErr = err
	}
	if lastErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrLoginToken, lastErr)
	}
	skew := leeway(c.ClockSkewLeeway, DefaultClockSkewLeeway)
	if exp, err := claims.GetExpirationTime(); err != nil {
		return nil, fmt.Errorf("%w: exp: %w", ErrLoginToken, err)
	} else if exp != nil && !now.Before(exp.Add(leeway(c.ExpirationLeeway, DefaultExpirationLeeway)+skew)) {
		return nil, fmt.Errorf("%w: token is expired", ErrLoginToken)
	}
	if nbf, err := claims.GetNotBefore(); err != nil {
		return nil, fmt.Errorf("%w: nbf: %w", ErrLoginToken, err)
	} else if nbf != nil && now.Add(leeway(c.NotBeforeLeeway, DefaultNotBeforeLeeway)+skew).Before(nbf.Time) {
		return nil, fmt.Errorf("%w: token is not valid yet", ErrLoginToken)
	}
	if iat, err := claims.GetIssuedAt(); err != nil {
		return nil, fmt.Errorf("%w: iat: %w", ErrLoginToken, err)
	} else if iat != nil && now.Add(skew).Before(iat.Time) {
		return nil, fmt.Errorf("%w: token is issued in the future", ErrLoginToken)
	}
	if len(c.BoundAudiences) > 0 {
		aud, err := claims.GetAudience()
		if err != nil {
			return nil, fmt.Errorf("%w: aud: %w", ErrLoginToken, err)
		}
		if !slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(c.BoundAudiences, a) }) {
			return nil, fmt.Errorf("%w: invalid audience (aud) claim: audience %q does not match any of the bound audiences", ErrLoginToken, aud)
		}
	}
	if len(c.BoundIssuer) > 0 {
		iss, _ := claims.GetIssuer()
		if !slices.Contains(c.BoundIssuer, iss) {
			return nil, fmt.Errorf("%w: invalid issuer (iss) claim %q", ErrLoginToken, iss)
		}
	}
	return claims, nil
}

// Claims are what binding rules and token names see of a login: each
// ClaimMappings value under value.<name>, each ListClaimMappings list
// under list.<name>, as Nomad's.
type Claims struct {
	Value map[string]string   `bexpr:"value"`
	List  map[string][]string `bexpr:"list"`
}

// claimAt returns the claim named by key: a top-level claim, or a JSON
// pointer ("/a/b") into nested ones.
func claimAt(claims map[string]any, key string) (any, bool) {
	if !strings.HasPrefix(key, "/") {
		v, ok := claims[key]
		return v, ok
	}
	var cur any = claims
	for _, part := range strings.Split(key[1:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func claimString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

// MapClaims maps verified claims to the values binding rules see. A
// mapped claim that is absent is left out; one of the wrong type is an
// error naming it.
func MapClaims(claims map[string]any, c *structs.ACLAuthMethodConfig) (*Claims, error) {
	out := &Claims{Value: map[string]string{}, List: map[string][]string{}}
	if c == nil {
		return out, nil
	}
	for _, k := range sortedKeys(c.ClaimMappings) {
		v, ok := claimAt(claims, k)
		if !ok {
			continue
		}
		s, ok := claimString(v)
		if !ok {
			return nil, fmt.Errorf("%w: claim %q is not a string, a number or a boolean", ErrClaims, k)
		}
		out.Value[c.ClaimMappings[k]] = s
	}
	for _, k := range sortedKeys(c.ListClaimMappings) {
		v, ok := claimAt(claims, k)
		if !ok {
			continue
		}
		var list []string
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				s, ok := claimString(e)
				if !ok {
					return nil, fmt.Errorf("%w: claim %q holds an element that is not a string, a number or a boolean", ErrClaims, k)
				}
				list = append(list, s)
			}
		default:
			s, ok := claimString(v)
			if !ok {
				return nil, fmt.Errorf("%w: claim %q is not a list", ErrClaims, k)
			}
			list = []string{s}
		}
		out.List[c.ListClaimMappings[k]] = list
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CheckSelector reports whether a binding rule's selector compiles.
func CheckSelector(selector string) error {
	if strings.TrimSpace(selector) == "" {
		return nil
	}
	if _, err := bexpr.CreateEvaluator(selector); err != nil {
		return fmt.Errorf("selector is invalid: %w", err)
	}
	return nil
}

// interpRE finds the ${name} of a bind name or a token name format.
var interpRE = regexp.MustCompile(`\$\{([^}]*)\}`)

// Interpolate fills in the ${name}s of tmpl from vars; an unknown name
// is an error.
func Interpolate(tmpl string, vars map[string]string) (string, error) {
	var err error
	out := interpRE.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := strings.TrimSpace(m[2 : len(m)-1])
		v, ok := vars[name]
		if !ok && err == nil {
			err = fmt.Errorf("unknown variable %q", name)
		}
		return v
	})
	return out, err
}

// CheckTemplate reports whether tmpl's ${...} are well formed: each
// names value.<name>, or one of extra.
func CheckTemplate(tmpl string, extra ...string) error {
	if strings.Count(tmpl, "${") != len(interpRE.FindAllString(tmpl, -1)) {
		return fmt.Errorf("unterminated ${ in %q", tmpl)
	}
	for _, m := range interpRE.FindAllStringSubmatch(tmpl, -1) {
		name := strings.TrimSpace(m[1])
		if !strings.HasPrefix(name, "value.") && !slices.Contains(extra, name) {
			return fmt.Errorf("unknown variable %q in %q (value.<name> only)", name, tmpl)
		}
	}
	return nil
}

// Vars returns the interpolation variables of claims: value.<name> for
// each mapped value.
func (c *Claims) Vars() map[string]string {
	out := make(map[string]string, len(c.Value)+2)
	for k, v := range c.Value {
		out["value."+k] = v
	}
	return out
}

// Bindings are what the binding rules grant a login.
type Bindings struct {
	Management bool
	Roles      []string // role names
	Policies   []string
}

// Bind evaluates rules over claims: each rule whose selector matches (an
// empty selector matches every login) adds its role, its policy, or
// management. roleExists says whether a role of that name exists now; a
// rule that binds a role that does not is skipped, as Nomad's.
func Bind(rules []*structs.ACLBindingRule, claims *Claims, roleExists func(name string) (bool, error)) (*Bindings, error) {
	out := &Bindings{}
	vars := claims.Vars()
	for _, r := range rules {
		if strings.TrimSpace(r.Selector) != "" {
			ev, err := bexpr.CreateEvaluator(r.Selector)
			if err != nil {
				return nil, fmt.Errorf("binding rule %s: selector is invalid: %w", r.ID, err)
			}
			ok, err := ev.Evaluate(claims)
			if err != nil || !ok {
				continue // a selector over a claim the login lacks does not match
			}
		}
		if r.BindType == structs.ACLBindingRuleBindTypeManagement {
			out.Management = true
			continue
		}
		name, err := Interpolate(r.BindName, vars)
		if err != nil {
			return nil, fmt.Errorf("cannot compute bind name of binding rule %s: %w", r.ID, err)
		}
		switch r.BindType {
		case structs.ACLBindingRuleBindTypeRole:
			ok, err := roleExists(name)
			if err != nil {
				return nil, err
			}
			if ok && !slices.Contains(out.Roles, name) {
				out.Roles = append(out.Roles, name)
			}
		case structs.ACLBindingRuleBindTypePolicy:
			if !slices.Contains(out.Policies, name) {
				out.Policies = append(out.Policies, name)
			}
		}
	}
	if !out.Management && len(out.Roles) == 0 && len(out.Policies) == 0 {
		return nil, ErrNoBindings
	}
	return out, nil
}
