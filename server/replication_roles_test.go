package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

func role(id, name string, policies ...string) *structs.ACLRole {
	r := &structs.ACLRole{ID: id, Name: name}
	for _, p := range policies {
		r.Policies = append(r.Policies, &structs.ACLRolePolicyLink{Name: p})
	}
	return r
}

func TestDiffRoles(t *testing.T) {
	have := []*structs.ACLRole{
		{ID: "r-same", Name: "same", Description: "d", CreateIndex: 4, ModifyIndex: 9},
		role("r-changed", "changed", "a"),
		role("r-gone", "gone"),
		role("r-x", "x"), role("r-y", "y"),
	}
	for _, tc := range []struct {
		name     string
		want     []*structs.ACLRole
		up, del  string
		upNames  string
		wantNone bool
	}{
		{name: "nil changes nothing", want: nil, wantNone: true},
		{name: "empty deletes all", want: []*structs.ACLRole{}, del: "r-changed r-gone r-same r-x r-y"},
		{
			name: "upsert and delete by ID, indexes ignored",
			want: []*structs.ACLRole{
				{ID: "r-same", Name: "same", Description: "d", CreateIndex: 40, ModifyIndex: 90},
				role("r-changed", "changed", "a", "b"), role("r-new", "new"),
				role("r-x", "x"), role("r-y", "y"), nil, {ID: "", Name: "no-id"},
			},
			up: "r-changed r-new", del: "r-gone",
		},
		{
			// Names are unique: the roles holding a name another role now
			// has are deleted first and written again with their IDs.
			name: "swapped names",
			want: []*structs.ACLRole{{ID: "r-same", Name: "same", Description: "d"}, role("r-changed", "changed", "a"), role("r-x", "y"), role("r-y", "x")},
			up:   "r-x r-y", upNames: "y x", del: "r-gone r-x r-y",
		},
		{
			name: "a new role takes a deleted one's name",
			want: []*structs.ACLRole{{ID: "r-same", Name: "same", Description: "d"}, role("r-changed", "changed", "a"), role("r-x", "x"), role("r-y", "y"), role("r-new", "gone")},
			up:   "r-new", del: "r-gone",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, del := DiffRoles(have, tc.want)
			if tc.wantNone {
				if up != nil || del != nil {
					t.Fatalf("+%v -%v", up, del)
				}
				return
			}
			var ids, names []string
			for _, r := range up {
				ids = append(ids, r.ID)
				names = append(names, r.Name)
				if r.CreateIndex != 0 || r.ModifyIndex != 0 {
					t.Fatalf("upserted with indexes: %+v", r)
				}
			}
			if got := strings.Join(ids, " "); got != tc.up {
				t.Fatalf("upserts %q, want %q", got, tc.up)
			}
			if tc.upNames != "" && strings.Join(names, " ") != tc.upNames {
				t.Fatalf("upserted names %v, want %q", names, tc.upNames)
			}
			if got := strings.Join(del, " "); got != tc.del {
				t.Fatalf("deletions %q, want %q", got, tc.del)
			}
		})
	}
}

func TestDiffAuthMethods(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	method := func(name string, def bool, aud string) *structs.ACLAuthMethod {
		return &structs.ACLAuthMethod{Name: name, Type: "JWT", TokenLocality: "global", MaxTokenTTL: time.Hour, Default: def,
			Config:     &structs.ACLAuthMethodConfig{JWTValidationPubKeys: []string{"k"}, BoundAudiences: []string{aud}},
			CreateTime: at, ModifyTime: at}
	}
	sealedSame := method("same", false, "a")
	sealedSame.Sealed = &structs.SealedSecret{KeyID: "k1", Data: []byte("x")}
	sealedSame.CreateIndex, sealedSame.ModifyIndex = 3, 3
	have := []*structs.ACLAuthMethod{sealedSame, method("old-default", true, "a"), method("gone", false, "a")}
	for _, tc := range []struct {
		name    string
		want    []*structs.ACLAuthMethod
		up, del string
	}{
		{name: "nil changes nothing", want: nil},
		{
			name: "sealed secrets, indexes and creation time are not compared",
			want: func() []*structs.ACLAuthMethod {
				s := method("same", false, "a")
				s.CreateTime, s.CreateIndex = at.Add(time.Hour), 70
				return []*structs.ACLAuthMethod{s, method("old-default", true, "a"), method("gone", false, "a")}
			}(),
		},
		{
			// The default moves: the method that stops being it is written
			// first, in the same entry.
			name: "default moved, one deleted",
			want: []*structs.ACLAuthMethod{method("same", false, "a"), method("old-default", false, "a"), method("a-new-default", true, "b")},
			up:   "old-default a-new-default", del: "gone",
		},
		{name: "changed configuration", want: []*structs.ACLAuthMethod{method("same", false, "b")}, up: "same", del: "gone old-default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, del := DiffAuthMethods(have, tc.want)
			var names []string
			for _, m := range up {
				names = append(names, m.Name)
				if m.Sealed != nil || m.CreateIndex != 0 {
					t.Fatalf("upserted %+v", m)
				}
			}
			if got := strings.Join(names, " "); got != tc.up {
				t.Fatalf("upserts %q, want %q", got, tc.up)
			}
			if got := strings.Join(del, " "); got != tc.del {
				t.Fatalf("deletions %q, want %q", got, tc.del)
			}
		})
	}
}

func TestDiffBindingRules(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rule := func(id, sel string) *structs.ACLBindingRule {
		return &structs.ACLBindingRule{ID: id, AuthMethod: "m", Selector: sel, BindType: "role", BindName: "ops", CreateTime: at, ModifyTime: at}
	}
	have := []*structs.ACLBindingRule{rule("b-same", "x"), rule("b-changed", "x"), rule("b-gone", "x")}
	same := rule("b-same", "x")
	same.CreateTime, same.CreateIndex, same.ModifyIndex = at.Add(time.Minute), 30, 40
	for _, tc := range []struct {
		name    string
		want    []*structs.ACLBindingRule
		up, del string
	}{
		{name: "nil changes nothing"},
		{name: "upsert and delete by ID", want: []*structs.ACLBindingRule{same, rule("b-changed", "y"), rule("b-new", "z"), nil}, up: "b-changed b-new", del: "b-gone"},
		{name: "empty deletes all", want: []*structs.ACLBindingRule{}, del: "b-changed b-gone b-same"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, del := DiffBindingRules(have, tc.want)
			var ids []string
			for _, r := range up {
				ids = append(ids, r.ID)
			}
			if got := strings.Join(ids, " "); got != tc.up {
				t.Fatalf("upserts %q, want %q", got, tc.up)
			}
			if got := strings.Join(del, " "); got != tc.del {
				t.Fatalf("deletions %q, want %q", got, tc.del)
			}
		})
	}
}

func TestDiffACLTokenRoleLinks(t *testing.T) {
	links := func(ids ...string) []*structs.ACLTokenRoleLink {
		var out []*structs.ACLTokenRoleLink
		for _, id := range ids {
			out = append(out, &structs.ACLTokenRoleLink{ID: id, Name: "n-" + id})
		}
		return out
	}
	tok := func(ids ...string) *structs.ACLToken {
		return &structs.ACLToken{AccessorID: "g", Type: "client", Global: true, SecretHash: "h", Roles: links(ids...)}
	}
	localRoles := []*structs.ACLRole{role("r1", "one"), role("r-local", "local")}
	for _, tc := range []struct {
		name  string
		have  *structs.ACLToken
		auth  *structs.ACLReplication
		links string // the links of the token upserted; "-" for none upserted
	}{
		{
			// The authority's token keeps a link to a role it deleted.
			name:  "links to roles the region will not hold are dropped",
			have:  nil,
			auth:  &structs.ACLReplication{Roles: []*structs.ACLRole{role("r1", "one"), role("r2", "two")}, Tokens: []*structs.ReplicatedACLToken{{Token: tok("r1", "r2", "r-deleted"), SecretHash: "h"}}},
			links: "r1 r2",
		},
		{
			name:  "a change of links replicates",
			have:  tok("r1"),
			auth:  &structs.ACLReplication{Roles: []*structs.ACLRole{role("r1", "one"), role("r2", "two")}, Tokens: []*structs.ReplicatedACLToken{{Token: tok("r2"), SecretHash: "h"}}},
			links: "r2",
		},
		{
			name:  "same links, in another order, renamed",
			have:  tok("r2", "r1"),
			auth:  &structs.ACLReplication{Roles: []*structs.ACLRole{role("r1", "uno"), role("r2", "two")}, Tokens: []*structs.ReplicatedACLToken{{Token: &structs.ACLToken{AccessorID: "g", Type: "client", Global: true, Roles: []*structs.ACLTokenRoleLink{{ID: "r1", Name: "uno"}, {ID: "r2"}}}, SecretHash: "h"}}},
			links: "-",
		},
		{
			// An older authority sends no roles: the links to this region's
			// roles are kept, the others dropped.
			name:  "a source without roles",
			have:  nil,
			auth:  &structs.ACLReplication{Tokens: []*structs.ReplicatedACLToken{{Token: tok("r1", "r2"), SecretHash: "h"}}},
			links: "r1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tokens []*structs.ACLToken
			if tc.have != nil {
				tokens = append(tokens, tc.have)
			}
			d := DiffACL(nil, localRoles, tokens, tc.auth)
			if tc.links == "-" {
				if len(d.UpsertTokens) != 0 {
					t.Fatalf("diff %s", d)
				}
				return
			}
			if len(d.UpsertTokens) != 1 {
				t.Fatalf("diff %s", d)
			}
			var ids []string
			for _, l := range d.UpsertTokens[0].Roles {
				ids = append(ids, l.ID)
			}
			if got := strings.Join(ids, " "); got != tc.links {
				t.Fatalf("links %q, want %q", got, tc.links)
			}
		})
	}
}

// stateSource serves what a region's state replicates, through JSON as
// `GET /v1/acl/replication` does.
type stateSource struct{ raft *fakeRaft }

func (s stateSource) ACLReplication(context.Context, uint64) (*structs.ACLReplication, uint64, error) {
	out, idx, err := ACLReplicationOf(s.raft.fsm.State().Snapshot())
	if err != nil {
		return nil, 0, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, 0, err
	}
	var back structs.ACLReplication
	if err := json.Unmarshal(b, &back); err != nil {
		return nil, 0, err
	}
	return &back, idx, nil
}

// TestACLReplicationRoundRolesAuthMethodsBindingRules replicates an
// authority's roles, auth methods and binding rules, and a global token
// linked to a role, into another region's state through its own log,
// then follows renames and deletions.
func TestACLReplicationRoundRolesAuthMethodsBindingRules(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	logger := hclog.NewNullLogger()
	auth, region := newFakeRaft(logger), newFakeRaft(logger)
	write := func(mt fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := auth.Apply(ctx, mt, req); err != nil {
			t.Fatalf("authority: %v", err)
		}
	}
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	method := &structs.ACLAuthMethod{Name: "jwt", Type: "JWT", TokenLocality: "global", MaxTokenTTL: time.Hour, Default: true,
		TokenNameFormat: structs.ACLAuthMethodDefaultTokenNameFormat, CreateTime: at, ModifyTime: at,
		Config: &structs.ACLAuthMethodConfig{JWTValidationPubKeys: []string{"k"}, OIDCClientSecret: structs.RedactedSecret, ExpirationLeeway: time.Second,
			// Empty, not nil: the next round must still find nothing to write.
			ClaimMappings: map[string]string{}, SigningAlgs: []string{}},
		Sealed: &structs.SealedSecret{KeyID: "authority-key", Data: []byte("sealed")}}
	write(fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: "read", Rules: `namespace "default" { policy = "read" }`}}})
	write(fsm.ACLRoleUpsertRequestType, &structs.ACLRoleUpsertRequest{Roles: []*structs.ACLRole{role("role-ops", "ops", "read"), role("role-dev", "dev")}})
	write(fsm.ACLAuthMethodUpsertRequestType, &structs.ACLAuthMethodUpsertRequest{Methods: []*structs.ACLAuthMethod{method}})
	write(fsm.ACLBindingRuleUpsertRequestType, &structs.ACLBindingRuleUpsertRequest{Rules: []*structs.ACLBindingRule{
		{ID: "rule-1", AuthMethod: "jwt", Selector: `"ops" in list.groups`, BindType: "role", BindName: "ops", CreateTime: at, ModifyTime: at}}})
	write(fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{AccessorID: "tok-global", Type: "client", Global: true, SecretHash: structs.HashSecret("s"), Roles: []*structs.ACLTokenRoleLink{{ID: "role-ops"}}, CreateTime: at}}})

	var rounds []string
	rep := &ACLReplicator{Source: stateSource{auth}, Raft: region, State: region.fsm.State, Logger: logger,
		Applied: func(d ACLDiff) { rounds = append(rounds, d.String()) }}
	if _, err := rep.round(ctx, 0); err != nil {
		t.Fatal(err)
	}
	snap := region.fsm.State().Snapshot()
	tok, err := snap.ACLTokenByAccessor("tok-global")
	if err != nil || tok == nil {
		t.Fatalf("token: %v %v (rounds %v)", tok, err, rounds)
	}
	if names, err := snap.TokenPolicyNames(tok); err != nil || !slices.Equal(names, []string{"read"}) {
		t.Fatalf("the global token is granted %v (%v), want the role's policy", names, err)
	}
	got, err := snap.ACLAuthMethodByName("jwt")
	if err != nil || got == nil || got.Sealed != nil || !got.Default || got.Config.OIDCClientSecret != structs.RedactedSecret ||
		got.Config.ExpirationLeeway != time.Second || !got.CreateTime.Equal(at) {
		t.Fatalf("auth method %+v %v", got, err)
	}
	if r, err := snap.ACLBindingRuleByID("rule-1"); err != nil || r == nil || r.BindName != "ops" {
		t.Fatalf("binding rule %+v %v", r, err)
	}
	// Nothing differs any more: a second round writes nothing.
	if _, err := rep.round(ctx, 0); err != nil || len(rounds) != 1 {
		t.Fatalf("second round: %v, rounds %v", err, rounds)
	}

	// The authority swaps two roles' names, deletes its auth method (and
	// with it its binding rule) and a policy.
	write(fsm.ACLRoleDeleteRequestType, &structs.ACLRoleDeleteRequest{IDs: []string{"role-dev"}})
	write(fsm.ACLRoleUpsertRequestType, &structs.ACLRoleUpsertRequest{Roles: []*structs.ACLRole{role("role-ops", "dev", "read")}})
	write(fsm.ACLRoleUpsertRequestType, &structs.ACLRoleUpsertRequest{Roles: []*structs.ACLRole{role("role-dev", "ops")}})
	write(fsm.ACLAuthMethodDeleteRequestType, &structs.ACLAuthMethodDeleteRequest{Names: []string{"jwt"}})
	if _, err := rep.round(ctx, 0); err != nil {
		t.Fatalf("third round: %v (rounds %v)", err, rounds)
	}
	snap = region.fsm.State().Snapshot()
	if r, _ := snap.ACLRoleByName("dev"); r == nil || r.ID != "role-ops" {
		t.Fatalf("role dev = %+v", r)
	}
	if r, _ := snap.ACLRoleByName("ops"); r == nil || r.ID != "role-dev" {
		t.Fatalf("role ops = %+v", r)
	}
	tok, _ = snap.ACLTokenByAccessor("tok-global")
	if names, err := snap.TokenPolicyNames(tok); err != nil || !slices.Equal(names, []string{"read"}) {
		t.Fatalf("after the rename the global token is granted %v (%v)", names, err)
	}
	if ms, _ := snap.ACLAuthMethods(); len(ms) != 0 {
		t.Fatalf("auth methods left: %v", ms)
	}
	if rs, _ := snap.ACLBindingRules(""); len(rs) != 0 {
		t.Fatalf("binding rules left: %v", rs)
	}
	if _, err := rep.round(ctx, 0); err != nil || len(rounds) != 2 {
		t.Fatalf("fourth round: %v, rounds %v", err, rounds)
	}

	// The authority deletes the last roles: an empty list deletes them here.
	write(fsm.ACLRoleDeleteRequestType, &structs.ACLRoleDeleteRequest{IDs: []string{"role-dev", "role-ops"}})
	if _, err := rep.round(ctx, 0); err != nil {
		t.Fatal(err)
	}
	snap = region.fsm.State().Snapshot()
	if rs, _ := snap.ACLRoles(""); len(rs) != 0 {
		t.Fatalf("roles left: %v (rounds %v)", rs, rounds)
	}
	tok, _ = snap.ACLTokenByAccessor("tok-global")
	if len(tok.Roles) != 0 {
		t.Fatalf("token links %v", tok.Roles)
	}
	if _, err := rep.round(ctx, 0); err != nil || len(rounds) != 3 {
		t.Fatalf("last round: %v, rounds %v", err, rounds)
	}
}

// An authority with none of a kind sends an empty list, which deletes
// them all elsewhere; only an older server's missing field is nil.
func TestACLReplicationOfSendsEmptyLists(t *testing.T) {
	out, idx, err := ACLReplicationOf(fsm.New(hclog.NewNullLogger()).State().Snapshot())
	if err != nil || idx == 0 {
		t.Fatalf("%v %d", err, idx)
	}
	b, _ := json.Marshal(out)
	for _, field := range []string{`"Policies":[]`, `"Tokens":[]`, `"NodePools":[]`, `"Roles":[]`, `"AuthMethods":[]`, `"BindingRules":[]`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("%s missing from %s", field, b)
		}
	}
}
