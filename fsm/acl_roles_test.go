package fsm

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The ACL roles, auth methods, binding rules and one-time tokens: written,
// checked by the store (unique role names, one default method per type,
// rules of existing methods, one-time tokens used up once), resolved
// into tokens' role links, and carried by snapshots.
func TestACLRoleEntriesAreAppliedAndSnapshotted(t *testing.T) {
	f := newTestFSM(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	applyOK(t, f, 2, ACLRoleUpsertRequestType, &structs.ACLRoleUpsertRequest{Roles: []*structs.ACLRole{
		{ID: "role-1", Name: "readers", Policies: []*structs.ACLRolePolicyLink{{Name: "readonly"}, {Name: "not-yet"}}},
	}})
	err := applyErr(t, f, 3, ACLRoleUpsertRequestType, &structs.ACLRoleUpsertRequest{Roles: []*structs.ACLRole{
		{ID: "role-2", Name: "readers", Policies: []*structs.ACLRolePolicyLink{{Name: "readonly"}}},
	}})
	if !errors.Is(err, state.ErrConflict) {
		t.Fatalf("a second role of the same name: %v", err)
	}
	tok := aclToken("acc", "secret", structs.ACLTokenTypeClient)
	tok.Roles = []*structs.ACLTokenRoleLink{{Name: "readers"}}
	applyOK(t, f, 4, ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{tok}})
	got, _ := snap(f).ACLTokenByAccessor("acc")
	if len(got.Roles) != 1 || got.Roles[0].ID != "role-1" || got.Roles[0].Name != "readers" {
		t.Fatalf("role links: %+v", got.Roles)
	}
	names, _ := snap(f).TokenPolicyNames(got)
	if len(names) != 2 || names[0] != "not-yet" || names[1] != "readonly" {
		t.Fatalf("policies of a token through its role: %v", names)
	}
	bad := aclToken("acc2", "secret2", structs.ACLTokenTypeClient)
	bad.Roles = []*structs.ACLTokenRoleLink{{Name: "nobody"}}
	if err := applyErr(t, f, 5, ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{bad}}); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a link to a missing role: %v", err)
	}

	jwt := &structs.ACLAuthMethod{Name: "jwt", Type: structs.ACLAuthMethodTypeJWT, Default: true, CreateTime: now,
		Config: &structs.ACLAuthMethodConfig{JWTValidationPubKeys: []string{"k"}, ClaimMappings: map[string]string{"a": "b"}}}
	applyOK(t, f, 6, ACLAuthMethodUpsertRequestType, &structs.ACLAuthMethodUpsertRequest{Methods: []*structs.ACLAuthMethod{jwt}})
	other := jwt.Copy()
	other.Name = "jwt2"
	if err := applyErr(t, f, 7, ACLAuthMethodUpsertRequestType, &structs.ACLAuthMethodUpsertRequest{Methods: []*structs.ACLAuthMethod{other}}); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("a second default JWT method: %v", err)
	}
	if err := applyErr(t, f, 8, ACLBindingRuleUpsertRequestType, &structs.ACLBindingRuleUpsertRequest{Rules: []*structs.ACLBindingRule{
		{ID: "rule-0", AuthMethod: "missing", BindType: "role", BindName: "readers"}}}); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a rule of a missing method: %v", err)
	}
	applyOK(t, f, 9, ACLBindingRuleUpsertRequestType, &structs.ACLBindingRuleUpsertRequest{Rules: []*structs.ACLBindingRule{
		{ID: "rule-1", AuthMethod: "jwt", Selector: `"eng" in list.groups`, BindType: "role", BindName: "readers"}}})
	applyOK(t, f, 10, OneTimeTokenUpsertRequestType, &structs.OneTimeTokenUpsertRequest{
		Token: &structs.OneTimeToken{AccessorID: "acc", SecretHash: structs.HashSecret("ott"), ExpiresAt: now.Add(10 * time.Minute)}, Now: now})

	// A snapshot carries all of it.
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	g := newTestFSM(t)
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if dump(t, f) != dump(t, g) {
		t.Fatalf("restored state differs:\n%s\n---\n%s", dump(t, f), dump(t, g))
	}
	if r, _ := snap(g).ACLRoleByName("readers"); r == nil || r.ID != "role-1" {
		t.Fatalf("restored role: %+v", r)
	}
	if m, _ := snap(g).ACLAuthMethodByName("jwt"); m == nil || m.Config.ClaimMappings["a"] != "b" {
		t.Fatalf("restored method: %+v", m)
	}
	if rs, _ := snap(g).ACLBindingRulesByAuthMethod("jwt"); len(rs) != 1 {
		t.Fatalf("restored rules: %+v", rs)
	}

	// The exchange uses the one-time token up; a second one finds none.
	applyOK(t, f, 11, OneTimeTokenExchangeRequestType, &structs.OneTimeTokenExchangeRequest{SecretHash: structs.HashSecret("ott")})
	if err := applyErr(t, f, 12, OneTimeTokenExchangeRequestType, &structs.OneTimeTokenExchangeRequest{SecretHash: structs.HashSecret("ott")}); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a second exchange: %v", err)
	}
	// Deleting a method deletes its rules; deleting a role drops the
	// tokens' links to it from their answers.
	applyOK(t, f, 13, ACLAuthMethodDeleteRequestType, &structs.ACLAuthMethodDeleteRequest{Names: []string{"jwt"}})
	if rs, _ := snap(f).ACLBindingRules(""); len(rs) != 0 {
		t.Fatalf("rules left after their method: %+v", rs)
	}
	applyOK(t, f, 14, ACLRoleDeleteRequestType, &structs.ACLRoleDeleteRequest{IDs: []string{"role-1"}})
	got, _ = snap(f).ACLTokenByAccessor("acc")
	if fixed, _ := snap(f).FixTokenRoleLinks(got); len(fixed.Roles) != 0 {
		t.Fatalf("links to a deleted role: %+v", fixed.Roles)
	}
}
