package server

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestDiffACLMirrorsPoliciesAndGlobalTokensOnly(t *testing.T) {
	exp := time.Unix(5000, 0)
	local := []*structs.ACLPolicy{
		{Name: "same", Rules: `namespace "default" { policy = "read" }`, CreateIndex: 3, ModifyIndex: 3},
		{Name: "changed", Rules: "old"},
		{Name: "gone", Rules: "x"},
	}
	tokens := []*structs.ACLToken{
		{AccessorID: "g-same", Type: "client", Policies: []string{"same"}, Global: true, SecretHash: "h1", ModifyIndex: 9},
		{AccessorID: "g-gone", Type: "client", Global: true, SecretHash: "h2"},
		{AccessorID: "local", Type: "client", SecretHash: "h3"},
		{AccessorID: "g-exp", Type: "client", Global: true, SecretHash: "h4"},
	}
	auth := &structs.ACLReplication{
		Policies: []*structs.ACLPolicy{
			{Name: "same", Rules: `namespace "default" { policy = "read" }`, CreateIndex: 40, ModifyIndex: 41},
			{Name: "changed", Rules: "new"},
			{Name: "new", Rules: "y"},
		},
		Tokens: []*structs.ReplicatedACLToken{
			{Token: &structs.ACLToken{AccessorID: "g-same", Type: "client", Policies: []string{"same"}, Global: true, ModifyIndex: 70}, SecretHash: "h1"},
			{Token: &structs.ACLToken{AccessorID: "g-new", Type: "management", Global: true, SecretID: "must-not-travel"}, SecretHash: "h5"},
			{Token: &structs.ACLToken{AccessorID: "g-exp", Type: "client", Global: true, ExpirationTime: &exp}, SecretHash: "h4"},
			{Token: &structs.ACLToken{AccessorID: "not-global", Type: "client"}, SecretHash: "h6"},
			{Token: &structs.ACLToken{AccessorID: "no-hash", Type: "client", Global: true}},
			nil,
		},
	}
	d := DiffACL(local, nil, tokens, auth)
	if got, want := d.String(), "policies +[changed new] -[gone] tokens +[g-exp g-new] -[g-gone]"; got != want {
		t.Fatalf("diff\n got %s\nwant %s", got, want)
	}
	for _, tok := range d.UpsertTokens {
		if tok.SecretID != "" || tok.SecretHash == "" || tok.CreateIndex != 0 {
			t.Fatalf("token written as %+v", tok)
		}
	}
	// Applied, the next diff is empty.
	after := DiffACL(auth.Policies, nil, []*structs.ACLToken{tokens[0], tokens[2], d.UpsertTokens[0], d.UpsertTokens[1]}, auth)
	if !after.Empty() {
		t.Fatalf("second diff %s", after)
	}
	if !DiffACL(local, nil, tokens, nil).Empty() {
		t.Fatal("a nil answer deletes")
	}
}

func TestDiffNamespacesAndNodePools(t *testing.T) {
	have := []*structs.Namespace{
		{Name: "default", Description: "Default shared namespace", CreateIndex: 1, ModifyIndex: 1},
		{Name: "same", Description: "s", CreateIndex: 5, ModifyIndex: 7},
		{Name: "changed", Description: "old"},
		{Name: "gone"},
	}
	want := []*structs.Namespace{
		{Name: "default", Description: "Default shared namespace", CreateIndex: 3, ModifyIndex: 3},
		{Name: "same", Description: "s", CreateIndex: 50, ModifyIndex: 70},
		{Name: "changed", Description: "new"},
		{Name: "new", Meta: map[string]string{"team": "a"}},
	}
	up, del := DiffNamespaces(have, want)
	if len(up) != 2 || up[0].Name != "changed" || up[1].Name != "new" || up[1].CreateIndex != 0 || len(del) != 1 || del[0] != "gone" {
		t.Fatalf("namespaces: +%v -%v", up, del)
	}
	// "default" is never deleted, and a source that sends none changes nothing.
	if _, del := DiffNamespaces(have, []*structs.Namespace{}); len(del) != 3 || del[0] != "changed" {
		t.Fatalf("deleting all: %v", del)
	}
	if up, del := DiffNamespaces(have, nil); up != nil || del != nil {
		t.Fatal("a nil list changed something")
	}

	pools := []*structs.NodePool{
		{Name: "all"}, {Name: "default"}, {Name: "gpu", Description: "g", CreateIndex: 4, ModifyIndex: 4}, {Name: "old"},
	}
	wantPools := []*structs.NodePool{
		{Name: "all", Description: "changed built-in"}, {Name: "gpu", Description: "g", CreateIndex: 9, ModifyIndex: 9},
		{Name: "arm", NodeIdentityTTL: time.Hour},
	}
	pu, pd := DiffNodePools(pools, wantPools)
	if len(pu) != 1 || pu[0].Name != "arm" || len(pd) != 1 || pd[0] != "old" {
		t.Fatalf("node pools: +%v -%v", pu, pd)
	}
}
