package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// FuzzTokenHeader: whatever X-Nomad-Token and Authorization hold, nothing
// panics, and a write goes through only when the token presented is the
// write token's secret.
func FuzzTokenHeader(f *testing.F) {
	const secret = "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
	b := newFakeBackend()
	ctx := context.Background()
	if _, _, err := b.Apply(ctx, fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "w", Rules: `namespace "default" { policy = "write" }`},
		{Name: structs.AnonymousPolicy, Rules: `namespace "default" { policy = "read" }`},
	}}); err != nil {
		f.Fatal(err)
	}
	if _, _, err := b.Apply(ctx, fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{AccessorID: "a", SecretHash: structs.HashSecret(secret), Type: structs.ACLTokenTypeClient, Policies: []string{"w"}},
	}}); err != nil {
		f.Fatal(err)
	}
	s := New(b, nil, WithACL(ACLConfig{Enabled: true}), WithWriteLimit(WriteLimit{}))
	for _, seed := range [][2]string{
		{secret, ""}, {"", "Bearer " + secret}, {" " + secret + " ", ""}, {"", "bearer " + secret},
		{strings.ToUpper(secret), ""}, {secret + "\x00", ""}, {"", "Bearer"}, {"", "Basic " + secret},
		{"x", "Bearer " + secret}, {"", ""}, {strings.Repeat("a", 4096), ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, token, authorization string) {
		r := httptest.NewRequest("PUT", "/v1/jobs", strings.NewReader(webJob))
		r.Header.Set(TokenHeader, token)
		r.Header.Set("Authorization", authorization)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, r)
		presented := TokenFromRequest(r)
		switch {
		case rec.Code == 200 && presented != secret:
			t.Fatalf("a write with token %q (authorization %q) went through", token, authorization)
		case rec.Code != 200 && presented == secret:
			t.Fatalf("the write token was refused: %d %s", rec.Code, rec.Body.String())
		case rec.Code != 200 && rec.Code != 403:
			t.Fatalf("token %q: %d %s", token, rec.Code, rec.Body.String())
		}
		if strings.Contains(rec.Body.String(), secret) {
			t.Fatalf("the answer holds the secret: %s", rec.Body.String())
		}
	})
}
