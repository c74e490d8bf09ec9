package fsm

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

func aclToken(accessor, secret, typ string, policies ...string) *structs.ACLToken {
	return &structs.ACLToken{AccessorID: accessor, SecretHash: structs.HashSecret(secret), Type: typ,
		Policies: policies, CreateTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// applyErr applies req at index and returns the error it answers with.
func applyErr(t *testing.T, f *FSM, index uint64, mt MessageType, req any) error {
	t.Helper()
	resp := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: entry(t, mt, req)})
	err, _ := resp.(error)
	return err
}

// The ACL entries: bootstrap once (again only with the reset index),
// policies and tokens upserted and deleted, tokens found by the hash of
// their secret, and all of it carried by snapshots.
func TestACLEntriesAreAppliedAndSnapshotted(t *testing.T) {
	f := newTestFSM(t)
	if idx, _ := snap(f).ACLBootstrapIndex(); idx != 0 {
		t.Fatalf("bootstrap index of an empty store: %d", idx)
	}
	root := aclToken("root-accessor", "root-secret", structs.ACLTokenTypeManagement)
	applyOK(t, f, 3, ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{Token: root})
	if idx, _ := snap(f).ACLBootstrapIndex(); idx != 3 {
		t.Fatalf("bootstrap index: %d, want 3", idx)
	}
	err := applyErr(t, f, 4, ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{
		Token: aclToken("second", "second-secret", structs.ACLTokenTypeManagement)})
	if !errors.Is(err, state.ErrACLBootstrapped) || !strings.Contains(err.Error(), "ACL bootstrap already done (reset index: 3)") {
		t.Fatalf("second bootstrap: %v", err)
	}
	if tok, _ := snap(f).ACLTokenByAccessor("second"); tok != nil {
		t.Fatal("a refused bootstrap left its token")
	}
	// Nomad's reset: the bootstrap index lets one more bootstrap through.
	applyOK(t, f, 5, ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{
		Token: aclToken("second", "second-secret", structs.ACLTokenTypeManagement), ResetIndex: 3})
	if idx, _ := snap(f).ACLBootstrapIndex(); idx != 5 {
		t.Fatalf("bootstrap index after reset: %d, want 5", idx)
	}

	applyOK(t, f, 6, ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readonly", Rules: `namespace "default" { policy = "read" }`},
		{Name: "writer", Rules: `namespace "default" { policy = "write" }`},
	}})
	applyOK(t, f, 7, ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readonly", Description: "changed", Rules: `namespace "*" { policy = "read" }`},
	}})
	p, _ := snap(f).ACLPolicyByName("readonly")
	if p == nil || p.CreateIndex != 6 || p.ModifyIndex != 7 || p.Description != "changed" {
		t.Fatalf("policy after update: %+v", p)
	}

	applyOK(t, f, 8, ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		aclToken("reader", "reader-secret", structs.ACLTokenTypeClient, "readonly"),
	}})
	tok, _ := snap(f).ACLTokenBySecretHash(structs.HashSecret("reader-secret"))
	if tok == nil || tok.AccessorID != "reader" || tok.SecretID != "" || tok.CreateIndex != 8 {
		t.Fatalf("token by secret hash: %+v", tok)
	}
	// An update keeps the creation and the secret, whatever it carries.
	upd := aclToken("reader", "", structs.ACLTokenTypeClient, "readonly", "writer")
	upd.SecretHash, upd.CreateTime, upd.Name = "", time.Time{}, "renamed"
	applyOK(t, f, 9, ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{upd}})
	tok, _ = snap(f).ACLTokenByAccessor("reader")
	if tok.Name != "renamed" || len(tok.Policies) != 2 || tok.CreateIndex != 8 || tok.ModifyIndex != 9 ||
		tok.SecretHash != structs.HashSecret("reader-secret") || tok.CreateTime.IsZero() {
		t.Fatalf("token after update: %+v", tok)
	}

	for _, bad := range []struct {
		name string
		mt   MessageType
		req  any
		want error
	}{
		{"token with its secret", ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
			{AccessorID: "x", SecretID: "plain", SecretHash: structs.HashSecret("plain"), Type: structs.ACLTokenTypeClient}}}, state.ErrInvalid},
		{"new token without a hash", ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
			{AccessorID: "x", Type: structs.ACLTokenTypeClient}}}, state.ErrInvalid},
		{"token of no type", ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
			{AccessorID: "x", SecretHash: "h", Type: "root"}}}, state.ErrInvalid},
		{"a secret another token holds", ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
			aclToken("x", "reader-secret", structs.ACLTokenTypeClient)}}, state.ErrConflict},
		{"unknown policy", ACLPolicyDeleteRequestType, &structs.ACLPolicyDeleteRequest{Names: []string{"writer", "nope"}}, state.ErrNotFound},
		{"unknown token", ACLTokenDeleteRequestType, &structs.ACLTokenDeleteRequest{AccessorIDs: []string{"nope"}}, state.ErrNotFound},
	} {
		if err := applyErr(t, f, 10, bad.mt, bad.req); !errors.Is(err, bad.want) {
			t.Errorf("%s: %v, want %v", bad.name, err, bad.want)
		}
	}
	if p, _ := snap(f).ACLPolicyByName("writer"); p == nil {
		t.Fatal("a refused delete removed a policy")
	}

	var buf bytes.Buffer
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte("reader-secret")) {
		t.Fatal("the snapshot holds a secret")
	}
	g := newTestFSM(t)
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, f), dump(t, g); a != b {
		t.Fatalf("restored state differs:\n%s", firstDiff(a, b))
	}
	if tok, _ := snap(g).ACLTokenBySecretHash(structs.HashSecret("reader-secret")); tok == nil || tok.AccessorID != "reader" {
		t.Fatalf("restored token by hash: %+v", tok)
	}
	if idx, _ := snap(g).ACLBootstrapIndex(); idx != 5 {
		t.Fatalf("restored bootstrap index: %d", idx)
	}

	applyOK(t, g, 11, ACLTokenDeleteRequestType, &structs.ACLTokenDeleteRequest{AccessorIDs: []string{"reader"}})
	if tok, _ := snap(g).ACLTokenBySecretHash(structs.HashSecret("reader-secret")); tok != nil {
		t.Fatal("deleted token still found by its secret")
	}
	applyOK(t, g, 12, ACLPolicyDeleteRequestType, &structs.ACLPolicyDeleteRequest{Names: []string{"writer"}})
	if ps, _ := snap(g).ACLPolicies(); len(ps) != 1 || ps[0].Name != "readonly" {
		t.Fatalf("policies after delete: %+v", ps)
	}
}

// A node's secret hash survives a re-registration without one, and no
// other node may claim it.
func TestNodeSecretHash(t *testing.T) {
	f := newTestFSM(t)
	n := &structs.Node{ID: "n1", Name: "n1", Datacenter: "dc1", SecretHash: structs.HashSecret("s1")}
	applyOK(t, f, 1, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	again := n.Copy()
	again.SecretHash = ""
	applyOK(t, f, 2, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: again})
	if got, _ := snap(f).NodeBySecretHash(structs.HashSecret("s1")); got == nil || got.ID != "n1" {
		t.Fatalf("node by secret after re-registration: %+v", got)
	}
	other := &structs.Node{ID: "n2", Name: "n2", Datacenter: "dc1", SecretHash: structs.HashSecret("s1")}
	if err := applyErr(t, f, 3, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: other}); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("second node with the same secret: %v", err)
	}
}
