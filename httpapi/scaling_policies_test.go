package httpapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// The scaling policy reads, in Nomad's shapes, and who may make them: a
// token with list-scaling-policies (or read-scaling-policy for one
// policy), or with read-job, as Nomad's; not one with list-jobs alone.
// A stopped job's policy is answered disabled; another namespace's
// policies are not shown unless the token may read them.
func TestScalingPolicyReads(t *testing.T) {
	f := newACLFixture(t)
	apply := func(mt fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := f.b.Apply(context.Background(), mt, req); err != nil {
			t.Fatal(err)
		}
	}
	apply(fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "scaler", Rules: `namespace "default" { capabilities = ["list-scaling-policies", "read-scaling-policy"] }`},
		{Name: "lister", Rules: `namespace "default" { capabilities = ["list-jobs"] }`},
	}})
	for _, tk := range []struct{ name, policy string }{{"scaler", "scaler"}, {"lister", "lister"}} {
		secret := structs.GenerateUUID()
		f.secrets[tk.name] = secret
		apply(fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{
			AccessorID: "acc-" + tk.name, SecretHash: structs.HashSecret(secret), Name: tk.name,
			Type: structs.ACLTokenTypeClient, Policies: []string{tk.policy}}}})
	}
	scaled := func(ns, id, policyID string, stop bool) *structs.Job {
		j := statetestJob(id)
		j.Namespace, j.Stop = ns, stop
		j.TaskGroups[0].Scaling = &structs.ScalingPolicy{ID: policyID, Type: "horizontal", Namespace: ns, Min: 1, Max: 4, Enabled: true,
			Target: map[string]string{"Namespace": ns, "Job": id, "Group": "g"}, Policy: map[string]any{"cooldown": "1m"}}
		return j
	}
	apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: scaled("default", "api", "p-api", false)})
	apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: scaled("default", "old", "p-old", true)})
	apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: scaled("other", "far", "p-far", false)})

	list := func(who, query string) (int, []structs.ScalingPolicyListStub) {
		t.Helper()
		code, body := f.do(t, who, "GET", "/v1/scaling/policies"+query, "")
		var out []structs.ScalingPolicyListStub
		if code == 200 {
			if err := json.Unmarshal([]byte(body), &out); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
		}
		return code, out
	}
	ids := func(stubs []structs.ScalingPolicyListStub) string {
		var out []string
		for _, s := range stubs {
			out = append(out, s.ID)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		who, query string
		code       int
		want       string
	}{
		{"mgmt", "", 200, "p-api,p-old"},
		{"mgmt", "?namespace=*", 200, "p-api,p-old,p-far"},
		{"mgmt", "?job=api", 200, "p-api"},
		{"mgmt", "?type=horizontal", 200, "p-api,p-old"},
		{"mgmt", "?type=vertical", 200, ""},
		{"mgmt", "?namespace=other", 200, "p-far"},
		{"scaler", "", 200, "p-api,p-old"},
		{"scaler", "?namespace=*", 200, "p-api,p-old"},
		{"reader", "", 200, "p-api,p-old"},
		{"lister", "", 403, ""},
		{"", "", 403, ""},
		{"scaler", "?namespace=other", 403, ""},
	} {
		code, stubs := list(c.who, c.query)
		if code != c.code || ids(stubs) != c.want {
			t.Errorf("%s %s: %d %q, want %d %q", c.who, c.query, code, ids(stubs), c.code, c.want)
		}
	}
	_, stubs := list("mgmt", "")
	if stubs[1].Enabled || !stubs[0].Enabled || stubs[0].Target["Job"] != "api" || stubs[0].Type != "horizontal" {
		t.Errorf("stubs %+v", stubs)
	}

	code, body := f.do(t, "scaler", "GET", "/v1/scaling/policy/p-api", "")
	var p structs.ScalingPolicy
	if code != 200 || json.Unmarshal([]byte(body), &p) != nil || p.Max != 4 || p.Policy["cooldown"] != "1m" || p.Target["Group"] != "g" {
		t.Fatalf("policy: %d %s", code, body)
	}
	for _, c := range []struct {
		who, path string
		code      int
	}{
		{"reader", "/v1/scaling/policy/p-api", 200},
		{"lister", "/v1/scaling/policy/p-api", 403},
		{"mgmt", "/v1/scaling/policy/p-far", 404},
		{"mgmt", "/v1/scaling/policy/p-far?namespace=other", 200},
		{"mgmt", "/v1/scaling/policy/nope", 404},
	} {
		if code, body := f.do(t, c.who, "GET", c.path, ""); code != c.code {
			t.Errorf("%s %s: %d %s, want %d", c.who, c.path, code, body, c.code)
		}
	}

	// Dispatch needs dispatch-job: a read policy lacks it.
	if code, body := f.do(t, "reader", "POST", "/v1/job/web/dispatch", `{}`); code != 403 || !strings.Contains(body, "dispatch-job") {
		t.Errorf("dispatch with a read token: %d %s", code, body)
	}
	if code, _ := f.do(t, "writer", "POST", "/v1/job/web/dispatch?namespace=*", `{}`); code != 400 && code != 403 {
		t.Errorf("dispatch in namespace *: %d", code)
	}
}
